-- :Coder /help through the Lua API gives a mode == "command" result; the
-- slash commands complete on the command line.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/_lib.lua')
local R = T.result

T.run(function()
  local coder = T.setup()
  T.client()
  local res
  coder.input('/help', {}, function(r)
    res = r
  end)
  T.wait(30000, function()
    return res ~= nil
  end, 'the /help result')
  R.help = res
  R.completion = vim.fn.getcompletion('Coder /he', 'cmdline')
  R.completion_all = vim.fn.getcompletion('Coder /', 'cmdline')
  -- `@` completes workspace files through coder.completeInput; :CoderInput is :Coder
  R.at_completion = vim.fn.getcompletion('Coder explain @a.t', 'cmdline')
  R.input_completion = vim.fn.getcompletion('CoderInput /he', 'cmdline')
  -- the :Coder command itself
  vim.cmd('Coder /help')
  T.wait(30000, function()
    return coder.status() == 'coder: idle'
  end, ':Coder /help to finish')
  -- an unknown command is a result with mode "error", not an LSP error
  local bad
  coder.input('/definitely-not-a-command', function(r)
    bad = r
  end)
  T.wait(30000, function()
    return bad ~= nil
  end, 'the unknown-command result')
  R.unknown = bad
  R.ok = true
end)
