-- What a plugin or automation sends through the Lua API with `origin` (contract section
-- 18) cannot run a shell line or /trust; what the user types (no origin) can.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/_lib.lua')
local R = T.result

local function wait_result(start, what)
  local res
  start(function(r)
    res = r
  end)
  T.wait(30000, function()
    return res ~= nil
  end, what)
  return res
end

T.run(function()
  local coder = T.setup()
  T.client()
  R.link_shell = wait_result(function(cb)
    coder.input('!touch pwned', { origin = 'link' }, cb)
  end, 'the link shell result')
  R.client_shell = wait_result(function(cb)
    coder.shell('touch pwned', { origin = 'client' }, cb)
  end, 'the client shell result')
  R.link_trust = wait_result(function(cb)
    coder.slash('trust', nil, { origin = 'link' }, cb)
  end, 'the link trust result')
  R.typed = wait_result(function(cb)
    coder.input('!echo typed', {}, cb)
  end, 'the typed shell result')
  R.ok = true
end)
