-- Work-done progress of the coder clients: which tokens are running (for
-- :CoderInterrupt) and what they are doing (for the statusline), and the `/task`s
-- running (their `taskUpdated` events: the statusline shows the percentage).
local M = {}

-- [client_id] = { [key] = { token = <original token>, title, message, seq } }
local active = {}
-- [client_id] = { [key] = true }: tokens that ended. A `begin` or `report` that
-- arrives after the end (the result overtook the progress notification) must
-- not bring the token back: the statusline would say "running" forever.
local ended = {}
local seq = 0
local listeners = {}
-- [client_id] = { [task_id] = { id, status, completed, failed, total, percentage,
--                               tokens_used, submission, seq } }: the running tasks
local tasks = {}
-- [client_id] = { [submissionId] = true }: submissions that ended; a late `taskUpdated`
-- of theirs must not show the task as running again
local ended_subs = {}
local RUNNING_TASK = { planning = true, running = true }

local function key_of(token)
  return type(token) .. ':' .. tostring(token)
end

local function changed()
  for _, fn in ipairs(listeners) do
    pcall(fn)
  end
  pcall(vim.cmd, 'redrawstatus')
end

--- fn() runs after every change.
function M.on_change(fn)
  table.insert(listeners, fn)
end

--- Feeds one `$/progress` notification's params.
function M.update(client_id, params)
  if type(params) ~= 'table' or params.token == nil then
    return
  end
  local value = params.value
  if type(value) ~= 'table' then
    return
  end
  local tokens = active[client_id]
  if not tokens then
    tokens = {}
    active[client_id] = tokens
  end
  local key = key_of(params.token)
  ended[client_id] = ended[client_id] or {}
  if value.kind ~= 'end' and ended[client_id][key] then
    return
  end
  seq = seq + 1
  if value.kind == 'begin' then
    tokens[key] = {
      token = params.token,
      title = value.title,
      message = value.message,
      cancellable = value.cancellable,
      seq = seq,
    }
  elseif value.kind == 'report' then
    local entry = tokens[key]
    if not entry then
      entry = { token = params.token }
      tokens[key] = entry
    end
    if value.message ~= nil and value.message ~= vim.NIL then
      entry.message = value.message
    end
    entry.seq = seq
  elseif value.kind == 'end' then
    tokens[key] = nil
    ended[client_id][key] = true
  end
  changed()
end

--- The tokens running for a client, newest first.
function M.tokens(client_id)
  local list = {}
  for _, entry in pairs(active[client_id] or {}) do
    table.insert(list, entry)
  end
  table.sort(list, function(a, b)
    return (a.seq or 0) > (b.seq or 0)
  end)
  local tokens = {}
  for _, entry in ipairs(list) do
    table.insert(tokens, entry.token)
  end
  return tokens, list
end

--- The newest running entry of a client, or nil.
function M.current(client_id)
  local _, list = M.tokens(client_id)
  return list[1]
end

--- The submission `submission_id` ended: its tasks are not running any more.
local function end_tasks(client_id, submission_id)
  ended_subs[client_id] = ended_subs[client_id] or {}
  ended_subs[client_id][submission_id] = true
  local mine = tasks[client_id]
  if not mine then
    return false
  end
  local any = false
  for id, t in pairs(mine) do
    if t.submission == submission_id then
      mine[id] = nil
      any = true
    end
  end
  return any
end

--- The turn of `submission_id` finished: ends the token the server created for
--- it (`coder/<submissionId>`) in case its `end` never reaches us.
function M.finish_submission(client_id, submission_id)
  if type(submission_id) == 'string' and submission_id ~= '' then
    end_tasks(client_id, submission_id)
    M.update(client_id, { token = 'coder/' .. submission_id, value = { kind = 'end' } })
  end
end

--- Feeds one `taskUpdated` event: a task that is planning or running is shown by
--- the statusline until an event says it paused, completed or failed (or its
--- submission finished).
function M.task_update(client_id, ev)
  if type(ev) ~= 'table' or type(ev.taskId) ~= 'string' then
    return
  end
  tasks[client_id] = tasks[client_id] or {}
  local over = ended_subs[client_id] and ev.submissionId ~= nil and ended_subs[client_id][ev.submissionId]
  if RUNNING_TASK[ev.status] and not over then
    seq = seq + 1
    tasks[client_id][ev.taskId] = {
      id = ev.taskId,
      status = ev.status,
      completed = tonumber(ev.completed) or 0,
      failed = tonumber(ev.failed) or 0,
      total = tonumber(ev.total) or 0,
      percentage = tonumber(ev.percentage) or 0,
      tokens_used = tonumber(ev.tokensUsed) or 0,
      submission = ev.submissionId,
      seq = seq,
    }
  else
    tasks[client_id][ev.taskId] = nil
  end
  changed()
end

--- The running task of a client that changed last, or nil.
function M.task(client_id)
  local best
  for _, t in pairs(tasks[client_id] or {}) do
    if not best or t.seq > best.seq then
      best = t
    end
  end
  return best
end

--- A result of `submission_id` arrived: its tasks are not running any more.
function M.finish_task_submission(client_id, submission_id)
  if type(submission_id) == 'string' and submission_id ~= '' and end_tasks(client_id, submission_id) then
    changed()
  end
end

function M.forget(client_id)
  active[client_id] = nil
  ended[client_id] = nil
  tasks[client_id] = nil
  ended_subs[client_id] = nil
  changed()
end

function M.touch()
  changed()
end

return M
