-- The transcript in the user's words (issue 38): a scripted turn searches, runs `ls`,
-- fails an edit, makes one and is denied another (b.txt); the test reads the buffer.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/_lib.lua')
local R = T.result

T.run(function()
  local coder = T.setup()
  R.asked = {}
  vim.ui.select = function(items, opts, on_choice)
    local want = tostring(opts.prompt):find('b%.txt') and 'Deny' or 'Allow once'
    local pick
    for _, item in ipairs(items) do
      local title = opts.format_item and opts.format_item(item) or tostring(item)
      if title == want then
        pick = item
      end
    end
    table.insert(R.asked, { prompt = opts.prompt, picked = want })
    on_choice(pick)
  end
  vim.cmd('edit a.txt')
  T.client()
  local res
  coder.input('fix a.txt', {}, function(r)
    res = r
  end)
  T.wait(60000, function()
    return res ~= nil
  end, 'the turn to finish')
  R.result = res
  R.root = vim.fn.getcwd()
  -- a window on the transcript folds the details under their call
  local buf, win = require('coder.transcript').open({ focus = true })
  R.foldmethod = vim.api.nvim_win_get_option(win, 'foldmethod')
  R.folded = {}
  for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    if vim.fn.foldclosed(i) ~= -1 then
      table.insert(R.folded, line)
    end
  end
  R.ok = true
end)
