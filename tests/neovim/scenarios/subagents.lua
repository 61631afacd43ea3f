-- An agent turn whose `task` tool call runs two subagents in parallel (the fake
-- Messages API answers one, fails the other): the transcript lines of the call.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/_lib.lua')
local R = T.result

T.run(function()
  local coder = T.setup()
  T.client()
  vim.cmd('Coder where is the loader?')
  T.wait(60000, function()
    return vim.tbl_contains(R.events, 'turnFinished') and coder.status() == 'coder: idle'
  end, 'the turn to finish')
  R.ok = true
end)
