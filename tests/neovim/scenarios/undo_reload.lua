-- The buffers follow what the server and the shell did to the files, without a
-- :checktime from the user: after `/undo` of an agent edit, and after a shell
-- command that rewrites an open file. The statusline is idle after each.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/_lib.lua')
local R = T.result

local function run(coder, text)
  local res
  coder.input(text, {}, function(r)
    res = r
  end)
  T.wait(60000, function()
    return res ~= nil
  end, 'the result of ' .. text)
  return res
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
  R.fix = run(coder, 'fix a.txt')
  T.record_saved(buf)
  R.after_fix = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  R.status_after_fix = coder.status()

  R.undo = run(coder, '/undo')
  vim.wait(200) -- the reload is scheduled; no :checktime from us
  R.after_undo = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  R.disk_after_undo = vim.fn.readfile('a.txt')
  R.status_after_undo = coder.status()

  R.shell = run(coder, "!printf 'from shell\\n' > a.txt")
  vim.wait(200)
  R.after_shell = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  R.status_after_shell = coder.status()
  R.modified = vim.api.nvim_buf_get_option(buf, 'modified')
  R.ok = true
end)
