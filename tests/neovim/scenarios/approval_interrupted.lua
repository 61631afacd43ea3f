-- An approval question nobody answers (a picker left open), then :CoderInterrupt:
-- the turn ends cancelled and the statusline is idle again, not "waiting for
-- approval" forever.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/_lib.lua')
local R = T.result

T.run(function()
  local coder = T.setup()
  R.asked = 0
  vim.ui.select = function(_, _, _)
    R.asked = R.asked + 1 -- never answers
  end
  T.client()
  local res
  coder.input('fix a.txt', {}, function(r)
    res = r
  end)
  -- From a timer: on Neovim < 0.10 the question's handler waits (vim.wait) on
  -- the stack under this script, and only timers and events run meanwhile.
  local timer = (vim.uv or vim.loop).new_timer()
  timer:start(50, 50, vim.schedule_wrap(function()
    if not R.status_asking and coder.status() == 'coder: waiting for approval' then
      R.status_asking = coder.status()
      timer:stop()
      coder.interrupt({ command = true })
    end
  end))
  T.wait(45000, function()
    return res ~= nil
  end, 'the interrupted turn')
  R.result = res
  T.wait(5000, function()
    return coder.status() == 'coder: idle'
  end, 'idle after the interrupt')
  R.ok = true
end)
