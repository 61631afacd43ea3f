-- A reply whose stream breaks after some text and is retried (the fake Messages API
-- drops the connection): the server sends assistantRestart, and the transcript must
-- show the clean attempt once, without the partial text of the failed one.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/_lib.lua')
local R = T.result

T.run(function()
  local coder = T.setup()
  local res
  coder.input('say something', function(r)
    res = r
  end)
  T.wait(60000, function()
    return res ~= nil
  end, 'the turn to finish')
  T.wait(10000, function()
    return coder.status() == 'coder: idle'
  end, 'the client to be idle')
  R.result = res
  R.transcript = coder.transcript.lines()
  R.ok = true
end)
