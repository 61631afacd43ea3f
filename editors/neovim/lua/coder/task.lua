--- `:CoderTask` and the Lua API `coder.task`: long-running tasks (`/task`, contract
--- section 14). Shows a task's status and the task list as readable lines, runs and
--- resumes tasks through the plugin's input path, completes subcommands and task ids.
local transcript = require('coder.transcript')
local util = require('coder.util')

local T = {}

--- What the plugin gives this module (set by `T.bind`): input, report, echo_lines,
--- show_transcript, command_root.
local api = {}
local known = {} -- [task id] = true: the `/task` ids seen in events and results

function T.bind(functions)
  api = functions
end

function T.remember(id)
  if type(id) == 'string' and id ~= '' then
    known[id] = true
  end
end


local TASK_SUBCOMMANDS = { 'list', 'resume', 'status' }
local STEP_MARK = { completed = 'x', running = '~', failed = '!', skipped = '-', pending = ' ' }
local function remember_task_data(data)
  if type(data) ~= 'table' then
    return
  end
  if data.kind == 'task' then
    T.remember(data.id)
  elseif data.kind == 'tasks' and type(data.tasks) == 'table' then
    for _, t in ipairs(data.tasks) do
      if type(t) == 'table' then
        T.remember(t.id)
      end
    end
  end
end

--- 75 -> "1m 15s"; nil -> "-".
local function duration(seconds)
  seconds = tonumber(seconds)
  if not seconds then
    return '-'
  end
  seconds = math.floor(seconds + 0.5)
  if seconds < 60 then
    return seconds .. 's'
  elseif seconds < 3600 then
    return string.format('%dm %02ds', math.floor(seconds / 60), seconds % 60)
  end
  return string.format('%dh %02dm', math.floor(seconds / 3600), math.floor((seconds % 3600) / 60))
end

local function num(v)
  return tonumber(v) or 0
end

local function counts_text(t)
  local s = string.format('%d/%d steps (%d%%)', num(t.completed), num(t.total), num(t.percentage))
  if num(t.failed) > 0 then
    s = s .. ', ' .. num(t.failed) .. ' failed'
  end
  if num(t.skipped) > 0 then
    s = s .. ', ' .. num(t.skipped) .. ' skipped'
  end
  return s
end

--- The lines :CoderTask status shows for the `data` of a `/task status` result
--- (`reply`, the result's text, may hold the note saying why it paused or failed).
function T.lines(data, reply)
  local n = transcript.thousands
  local lines = {
    string.format('task %s: %s', tostring(data.id), tostring(data.goal or '')),
    string.format('  %s · %s · %s / %s tokens · elapsed %s · ETA %s', tostring(data.status), counts_text(data),
      n(data.tokensUsed), n(data.budget), duration(data.elapsedSeconds), duration(data.etaSeconds)),
  }
  local steps = type(data.steps) == 'table' and data.steps or {}
  local id_width = 1
  for _, step in ipairs(steps) do
    id_width = math.max(id_width, #tostring(step.id))
  end
  for _, step in ipairs(steps) do
    local attempts = num(step.attempts)
    table.insert(lines, string.format('  [%s] %-' .. id_width .. 's  %s  (%s, %d attempt%s, %s tokens)',
      STEP_MARK[step.status] or '?', tostring(step.id), tostring(step.title or ''), tostring(step.status),
      attempts, attempts == 1 and '' or 's', n(step.tokens)))
  end
  local reply_lines = util.lines(reply or '')
  local note = (reply_lines[#reply_lines] or ''):match('^%s+%((.+)%)%s*$')
  if note then
    table.insert(lines, '  note: ' .. note)
  end
  if type(data.report) == 'string' and data.report ~= '' then
    table.insert(lines, '  report: ' .. data.report)
  end
  return lines
end

--- The lines :CoderTask list shows for the `data` of a `/task list` result.
function T.list_lines(data)
  local tasks = type(data.tasks) == 'table' and data.tasks or {}
  if #tasks == 0 then
    return { 'coder: no tasks in this workspace' }
  end
  local lines = { 'coder tasks (newest first):' }
  for _, t in ipairs(tasks) do
    table.insert(lines, string.format('  %s  %-9s %s · %s tokens  %s', tostring(t.id), tostring(t.status),
      counts_text(t), transcript.thousands(t.tokensUsed), tostring(t.goal or '')))
  end
  return lines
end

--- The lines that show a `/task status` or `/task list` result (nil: none).
local function task_result_lines(res)
  local data = res.data
  if res.mode == 'error' or type(data) ~= 'table' then
    return nil
  end
  if data.kind == 'task' then
    return T.lines(data, res.reply)
  elseif data.kind == 'tasks' then
    return T.list_lines(data)
  end
  return nil
end

--- `:CoderTask [args]`: `status [id]` (the default) and `list` show the task(s),
--- `resume [id]` continues one, anything else is the goal of a new task.
--- on_done(result, lines) replaces the display (lines: what status/list shows).
function T.run(args, on_done)
  args = vim.trim(args or '')
  local head = args:match('^(%S+)') or ''
  if head == '' or head == 'status' or head == 'list' then
    local text = '/task ' .. (head == '' and 'status' or args)
    return api.input(text, { progress = false }, function(res)
      remember_task_data(res.data)
      local ok, lines = pcall(task_result_lines, res)
      if not ok then
        if not on_done then
          vim.notify('coder: could not show the task: ' .. tostring(lines), vim.log.levels.ERROR)
        end
        lines = nil
      end
      if on_done then
        return on_done(res, lines)
      end
      if res.mode == 'error' then
        return api.report(res)
      end
      if lines then
        api.echo_lines(lines)
      elseif res.reply and res.reply ~= '' then
        api.echo_lines(util.lines(res.reply))
      end
    end)
  end
  if not on_done then
    api.show_transcript()
  end
  api.input('/task ' .. args, {}, function(res)
    remember_task_data(res.data)
    if on_done then
      return on_done(res)
    end
    api.report(res)
    if res.mode == 'command' and res.reply and res.reply ~= '' then
      api.echo_lines(util.lines(res.reply)) -- e.g. "Task ... is already completed."
    elseif res.mode ~= 'error' and res.status == 'failed' then
      vim.notify('coder: ' .. tostring(res.reply or 'the task failed'), vim.log.levels.WARN)
    end
  end)
end

--- Completion of :CoderTask: the subcommands, then the task ids (the ones seen,
--- and the workspace's `.coder/tasks/`) after `status` and `resume`.
function T.complete(arglead, cmdline, cursorpos)
  local before = cmdline:sub(1, cursorpos)
  local typed = before:match('^.-CoderTask!?%s+(.*)$') or ''
  local out = {}
  if not typed:find('%s') then
    for _, sub in ipairs(TASK_SUBCOMMANDS) do
      if sub:sub(1, #arglead) == arglead then
        table.insert(out, sub)
      end
    end
    return out
  end
  local sub, rest = typed:match('^(%S+)%s+(.*)$')
  if (sub ~= 'status' and sub ~= 'resume') or (rest or ''):find('%s') then
    return out
  end
  local ids = vim.deepcopy(known)
  local dir = api.command_root(vim.api.nvim_get_current_buf()) .. '/.coder/tasks'
  if vim.fn.isdirectory(dir) == 1 then
    local ok, names = pcall(vim.fn.readdir, dir)
    for _, name in ipairs(ok and names or {}) do
      if vim.fn.isdirectory(dir .. '/' .. name) == 1 then
        ids[name] = true
      end
    end
  end
  for id in pairs(ids) do
    if id:sub(1, #arglead) == arglead then
      table.insert(out, id)
    end
  end
  table.sort(out, function(a, b)
    return a > b -- ids start with their creation time: newest first
  end)
  return out
end

return T
