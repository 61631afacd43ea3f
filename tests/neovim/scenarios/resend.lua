-- :CoderResend (edit and resend, contract section 22): pick a past message (vim.ui.select
-- stubbed), edit it (vim.ui.input stubbed); the server forks the session before it.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/_lib.lua')
local R = T.result

T.run(function()
  local coder = T.setup()
  R.asked = {}
  vim.ui.select = function(items, opts, on_choice)
    local titles = {}
    for _, item in ipairs(items) do
      table.insert(titles, opts.format_item and opts.format_item(item) or tostring(item))
    end
    table.insert(R.asked, { kind = opts.kind, titles = titles })
    vim.schedule(function()
      on_choice(items[1])
    end)
  end
  vim.ui.input = function(opts, on_confirm)
    R.default = opts.default
    vim.schedule(function()
      on_confirm('!echo uno > uno.txt')
    end)
  end
  T.client()
  local function run(fn)
    local res
    fn(function(r)
      res = r
    end)
    T.wait(30000, function()
      return res ~= nil
    end, 'a result')
    return res
  end
  run(function(cb) coder.input('!echo one > one.txt', {}, cb) end)
  run(function(cb) coder.input('!echo two > two.txt', {}, cb) end)
  R.original = coder.session_id()
  vim.cmd('CoderResend')
  T.wait(30000, function()
    return vim.fn.filereadable('uno.txt') == 1 and coder.session_id() ~= R.original
  end, 'the resent command to run in a fork')
  R.fork = coder.session_id()
  R.one = vim.fn.filereadable('one.txt')
  R.two = vim.fn.filereadable('two.txt')
  R.sessions = run(function(cb) coder.sessions(function(list) cb(list) end) end)
  R.ok = true
end)
