-- :CoderTask against the fake Messages API: the error paths before any task, a
-- task whose step a fails (its dependant b is skipped, c completes), its status
-- and the list as the user reads them, an unknown id, then `resume` of it.
-- Records the transcript after each run, the statusline at every taskUpdated,
-- the messages each :CoderTask printed and the completions.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/_lib.lua')
local R = T.result

--- What :messages shows after running `cmd` (until `want` appears in it).
local function messages_of(cmd, want)
  vim.cmd('messages clear')
  vim.cmd(cmd)
  T.wait(30000, function()
    return vim.fn.execute('messages'):find(want, 1, true) ~= nil
  end, '"' .. want .. '" in :messages after :' .. cmd)
  return vim.split(vim.trim(vim.fn.execute('messages')), '\n', { plain = true })
end

local function notified(level, want)
  for _, n in ipairs(R.notifications) do
    if n.level == level and n.msg:find(want, 1, true) then
      return n.msg
    end
  end
  return nil
end

T.run(function()
  local coder = T.setup()
  T.client()
  local statuses, finished = {}, nil
  coder.on_event(function(ev)
    if ev.type == 'taskUpdated' then
      table.insert(statuses, coder.status())
      if ev.status ~= 'planning' and ev.status ~= 'running' then
        finished = ev.status
      end
    end
  end)
  local function run(cmd)
    statuses, finished = {}, nil
    vim.cmd(cmd)
    T.wait(90000, function()
      return finished ~= nil and coder.status() == 'coder: idle'
    end, ':' .. cmd .. ' to finish')
    return statuses
  end

  -- runs `cmd` and waits for the error it notifies (holding `needle`)
  local function error_of(cmd, needle, what)
    vim.cmd(cmd)
    T.wait(30000, function()
      return notified(vim.log.levels.ERROR, needle) ~= nil
    end, what)
    return notified(vim.log.levels.ERROR, needle)
  end

  R.complete_subcommands = vim.fn.getcompletion('CoderTask ', 'cmdline')
  R.complete_res = vim.fn.getcompletion('CoderTask res', 'cmdline')
  -- before any task: the list is empty, and status is an error
  R.empty_list = messages_of('CoderTask list', 'no tasks')
  R.no_task_error = error_of('CoderTask', 'no task', 'the error of :CoderTask without a task')

  R.run_statuses = run('CoderTask fragile thing')
  R.run_transcript = coder.transcript.lines()
  R.run_warning = notified(vim.log.levels.WARN, 'failed')

  R.complete_ids = vim.fn.getcompletion('CoderTask resume ', 'cmdline')
  R.status_messages = messages_of('CoderTask', 'Step c')
  R.list_messages = messages_of('CoderTask list', 'fragile thing')
  R.unknown_error = error_of('CoderTask status no-such-task', 'no-such-task', 'the error of an unknown id')

  local before = #coder.transcript.lines()
  R.resume_statuses = run('CoderTask resume ' .. (R.complete_ids[1] or ''))
  R.resume_transcript = vim.list_slice(coder.transcript.lines(), before + 1)
  R.resumed_messages = messages_of('CoderTask status', 'Step c')
  R.ok = true
end)
