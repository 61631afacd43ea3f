-- One server per root, however Neovim was started:
--   `nvim a.txt` (CODER_TEST_EARLY=1: this script runs from --cmd, so setup()
--   runs before the buffer is loaded, like a user's init.lua), or
--   `nvim` then `:edit a.txt`.
-- Records the coder clients, the "Coder: Fix" code actions offered over all
-- clients attached to the buffer, and the session the commands land in.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/_lib.lua')
local util = require('coder.util')
local R = T.result

local function coder_clients()
  local out = {}
  for _, c in ipairs(util.get_clients()) do
    if c.name == 'coder_ls' and not util.is_stopped(c) then
      table.insert(out, c)
    end
  end
  return out
end

local function body()
  local coder = require('coder')
  if vim.fn.argc() == 0 then
    vim.cmd('edit a.txt')
  end
  local buf = vim.api.nvim_get_current_buf()
  R.buffer_name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ':t')
  local client = T.client()
  T.wait(10000, function()
    return vim.lsp.buf_is_attached(buf, client.id)
  end, 'a.txt to be attached')
  -- a second start, if there is one, happens on the events that follow loading
  vim.cmd('doautocmd BufEnter')
  vim.wait(1500)
  R.clients = #coder_clients()
  R.attached = 0
  for _, c in ipairs(coder_clients()) do
    if vim.lsp.buf_is_attached(buf, c.id) then
      R.attached = R.attached + 1
    end
  end
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 3 } },
    context = { diagnostics = {} },
  }
  local responses
  vim.lsp.buf_request_all(buf, 'textDocument/codeAction', params, function(all)
    responses = all
  end)
  T.wait(20000, function()
    return responses ~= nil
  end, 'the code actions')
  R.fix_actions = 0
  for _, resp in pairs(responses) do
    for _, a in ipairs((resp.result ~= vim.NIL and resp.result) or {}) do
      if a.title == 'Coder: Fix' then
        R.fix_actions = R.fix_actions + 1
      end
    end
  end
  -- two commands in a row land in the same session
  local first, second
  coder.input('!echo one', {}, function(r)
    first = r
  end)
  T.wait(30000, function()
    return first ~= nil
  end, 'the first command')
  coder.input('!echo two', { bufnr = buf }, function(r)
    second = r
  end)
  T.wait(30000, function()
    return second ~= nil
  end, 'the second command')
  R.sessions = { first.sessionId, second.sessionId }
  R.ok = true
end

if vim.env.CODER_TEST_EARLY == '1' then
  T.setup()
  vim.api.nvim_create_autocmd('VimEnter', {
    once = true,
    callback = function()
      vim.schedule(function()
        T.run(body)
      end)
    end,
  })
else
  T.setup()
  T.run(body)
end
