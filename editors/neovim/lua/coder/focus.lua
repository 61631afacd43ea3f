-- Notifications (contract section 22): the server is told whether Neovim has the focus
-- (`coder.focus {focused}`, sent on FocusGained / FocusLost: a terminal that reports focus
-- is needed for those), and while it has not, a turn that ends or waits for the user comes
-- back as `coder/notify {kind, message}` (we declare `experimental.coderNotify`), shown
-- with vim.notify. A server that never hears from us takes the editor as focused.
local util = require('coder.util')

local M = {}

--- The last focus told to the servers (true until Neovim says otherwise).
M.focused = true

--- Tells each running coder client whether Neovim has the focus now.
function M.send(clients, focused)
  M.focused = focused
  local params = { command = 'coder.focus', arguments = { { focused = focused } } }
  for _, client in ipairs(clients) do
    if not util.is_stopped(client) then
      pcall(util.request, client, 'workspace/executeCommand', params, function() end)
    end
  end
end

--- `coder/notify`: the server's notification, through vim.notify.
function M.handler(_, params)
  if type(params) == 'table' and type(params.message) == 'string' then
    local failed = params.kind == 'turnFinished' and params.status == 'failed'
    vim.schedule(function()
      vim.notify('coder: ' .. params.message, failed and vim.log.levels.WARN or vim.log.levels.INFO)
    end)
  end
  return vim.NIL
end

return M
