-- `:Coder /diff turn` opens what the last submission changed in a `diff` buffer.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/_lib.lua')
local R = T.result

T.run(function()
  local coder = T.setup()
  T.client()
  local done
  coder.input('!echo changed-by-shell >> a.txt', {}, function(r)
    done = r
  end)
  T.wait(30000, function()
    return done ~= nil
  end, 'the shell command')
  vim.cmd('Coder /diff turn')
  T.wait(30000, function()
    return vim.fn.bufnr('coder://diff/turn-1') ~= -1
  end, 'the diff buffer')
  local bufnr = vim.fn.bufnr('coder://diff/turn-1')
  R.filetype = vim.bo[bufnr].filetype
  R.lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  R.shown = vim.fn.bufwinid(bufnr) ~= -1
  R.modifiable = vim.bo[bufnr].modifiable
  R.ok = true
end)
