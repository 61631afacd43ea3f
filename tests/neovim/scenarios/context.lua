-- The statusline helper shows the share of the context window in use: nothing before
-- the server reported it, "ctx N%" after a turn (contextUsage) and after /context.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/_lib.lua')
local R = T.result

T.run(function()
  local coder = T.setup()
  T.client()
  R.before = coder.context()
  local res
  coder.input('hello there', {}, function(r)
    res = r
  end)
  T.wait(60000, function()
    return res ~= nil
  end, 'the turn')
  R.after_turn = coder.context()
  R.percent_after_turn = coder.context_percent()
  local ctx
  coder.input('/context', {}, function(r)
    ctx = r
  end)
  T.wait(60000, function()
    return ctx ~= nil
  end, 'the /context result')
  R.context_result = ctx
  R.after_context = coder.context()
  R.status = coder.status()
  R.ok = true
end)
