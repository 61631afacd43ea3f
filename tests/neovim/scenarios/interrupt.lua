-- :CoderInterrupt stops a running `!sleep 30`: the result is "cancelled"
-- within a few seconds.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/_lib.lua')
local uv = vim.uv or vim.loop
local R = T.result

T.run(function()
  local coder = T.setup()
  local client = T.client()
  local res
  coder.input('!sleep 30', {}, function(r)
    res = r
  end)
  T.wait(15000, function()
    return #require('coder.progress').tokens(client.id) > 0 or res ~= nil
  end, 'the progress of !sleep 30 to begin')
  vim.wait(300) -- let the shell start
  R.status_running = coder.status()
  R.tokens = require('coder.progress').tokens(client.id)
  local t0 = uv.hrtime()
  vim.cmd('CoderInterrupt')
  T.wait(15000, function()
    return res ~= nil
  end, 'the interrupted result')
  R.elapsed = (uv.hrtime() - t0) / 1e9
  R.result = res
  T.wait(5000, function()
    return coder.status() == 'coder: idle'
  end, 'idle after the interrupt')
  R.ok = true
end)
