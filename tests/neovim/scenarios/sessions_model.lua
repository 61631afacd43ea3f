-- :CoderSessions, :CoderModel and :CoderResume (vim.ui.select stubbed).
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/_lib.lua')
local R = T.result

T.run(function()
  local coder = T.setup()
  R.asked = {}
  local picks = {}
  vim.ui.select = function(items, opts, on_choice)
    local titles = {}
    for _, item in ipairs(items) do
      table.insert(titles, opts.format_item and opts.format_item(item) or tostring(item))
    end
    table.insert(R.asked, { kind = opts.kind, prompt = opts.prompt, titles = titles })
    local pick = picks[opts.kind] and picks[opts.kind](items) or nil
    vim.schedule(function()
      on_choice(pick)
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
  -- two sessions: one with a shell command, then /new
  run(function(cb) coder.input('!echo one', {}, cb) end)
  local first = coder.session_id()
  run(function(cb) coder.input('/new', {}, cb) end)
  R.first_session = first
  R.second_session = coder.session_id()
  -- the session list
  R.sessions = run(function(cb) coder.sessions(function(list, res) cb({ list = list, res = res }) end) end)
  vim.cmd('CoderSessions')
  T.wait(10000, function()
    return vim.fn.execute('messages'):find('coder sessions', 1, true) ~= nil
  end, ':CoderSessions to echo the list')
  R.messages = vim.fn.execute('messages')
  -- :CoderModel: pick a model other than the current one
  picks['coder.model'] = function(items)
    for _, m in ipairs(items) do
      if not m.name:match('%[current%]') and m.name ~= R.current_model then
        R.picked_model = m.name
        return m
      end
    end
  end
  local model_data = run(function(cb) coder.execute('coder.model', {}, cb) end)
  R.model_data = model_data
  R.current_model = model_data.data and model_data.data.current
  R.model_switch = run(function(cb) coder.model(nil, cb) end)
  -- :CoderResume: pick the first session
  picks['coder.session'] = function(items)
    for _, s in ipairs(items) do
      if s.id == first then
        return s
      end
    end
  end
  R.resume = run(function(cb) coder.resume(nil, cb) end)
  R.after_resume_session = coder.session_id()
  R.ok = true
end)
