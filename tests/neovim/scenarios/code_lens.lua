-- Code lenses on the agent's lines (section 23) through Neovim's own vim.lsp.codelens:
-- after the scripted fix (foo -> bar in a.txt) the lens names the prompt; running it
-- (vim.lsp.codelens.run) reverts the hunk in the buffer.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/_lib.lua')
local R = T.result

local function lenses(buf)
  local out = {}
  for _, lens in ipairs(vim.lsp.codelens.get(buf) or {}) do
    if lens.command then
      table.insert(out, { line = lens.range.start.line, title = lens.command.title })
    end
  end
  return out
end

T.run(function()
  local coder = T.setup()
  vim.ui.select = function(items, opts, on_choice)
    local pick
    for _, item in ipairs(items) do
      local title = opts.format_item and opts.format_item(item) or tostring(item)
      if title == 'Allow once' then
        pick = item
      end
    end
    vim.schedule(function()
      on_choice(pick)
    end)
  end
  vim.cmd('edit a.txt')
  local buf = vim.api.nvim_get_current_buf()
  local client = T.client()
  T.wait(10000, function()
    return vim.lsp.buf_is_attached(buf, client.id)
  end, 'a.txt to be attached')
  local res
  coder.input('fix the foo in a.txt', {}, function(r)
    res = r
  end)
  T.wait(60000, function()
    return res ~= nil
  end, 'the turn')
  R.fix = res
  T.wait(10000, function()
    return #lenses(buf) > 0
  end, 'a lens on the agent line')
  R.lenses = lenses(buf)
  R.after_fix = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.lsp.codelens.run()
  T.wait(30000, function()
    return vim.api.nvim_buf_get_lines(buf, 0, -1, false)[1] == 'foo'
  end, 'the revert in the buffer')
  R.after_revert = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  T.wait(10000, function() -- saved as after any edit of the server's (save_edited_files)
    return vim.fn.readfile('a.txt')[1] == 'foo'
  end, 'the revert saved to disk')
  R.disk_after_revert = vim.fn.readfile('a.txt')
  T.wait(10000, function()
    return #lenses(buf) == 0
  end, 'the lens to go')
  R.ok = true
end)
