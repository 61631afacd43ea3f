-- The `coder://transcript` scratch buffer: every `coder/event` rendered as text,
-- streamed as it arrives (assistant deltas and shell chunks extend the last line).
local util = require('coder.util')

local M = {}

M.name = 'coder://transcript'

local state = {
  bufnr = nil,
  empty = true, -- the buffer holds only its initial empty line
  stream = nil, -- key of the stream the last line belongs to
  streamed = {}, -- [submissionId] = true once assistant deltas arrived
  shell_streamed = {}, -- [submissionId] = true once shell chunks arrived
  -- [submissionId] = the line ranges {first, last} (0-based, end exclusive) of the
  -- assistant text streamed since the step began: dropped on assistantRestart
  blocks = {},
  -- [submissionId] = { calls = {[callId] = depth of the agent that made it},
  --   agents = {[agentId] = {label, depth}}, tasks = {[taskId] = last line shown} }:
  -- where subagents' lines go (indented under the call that started them)
  nest = {},
}

local function valid()
  return state.bufnr and vim.api.nvim_buf_is_valid(state.bufnr)
end

--- The transcript buffer, created on first use (not displayed).
function M.bufnr()
  if valid() then
    return state.bufnr
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_option(buf, 'buftype', 'nofile')
  vim.api.nvim_buf_set_option(buf, 'bufhidden', 'hide')
  vim.api.nvim_buf_set_option(buf, 'swapfile', false)
  pcall(vim.api.nvim_buf_set_name, buf, M.name)
  vim.api.nvim_buf_set_option(buf, 'filetype', 'coder')
  vim.api.nvim_buf_set_option(buf, 'modifiable', false)
  state.bufnr = buf
  state.empty = true
  state.stream = nil
  return buf
end

local function with_modifiable(buf, fn)
  vim.api.nvim_buf_set_option(buf, 'modifiable', true)
  local ok, err = pcall(fn)
  vim.api.nvim_buf_set_option(buf, 'modifiable', false)
  if not ok then
    error(err)
  end
end

local function follow(buf)
  local last = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    pcall(vim.api.nvim_win_set_cursor, win, { last, 0 })
  end
end

local function append_lines(lines)
  local buf = M.bufnr()
  with_modifiable(buf, function()
    if state.empty then
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
      state.empty = false
    else
      vim.api.nvim_buf_set_lines(buf, -1, -1, false, lines)
    end
  end)
  follow(buf)
end

--- Appends whole lines (ends any stream).
function M.append(text)
  state.stream = nil
  local lines = util.lines(text)
  if #lines > 1 and lines[#lines] == '' then
    table.remove(lines)
  end
  append_lines(lines)
end

--- Appends `text` to the stream `key`: continues the last line when the last
--- thing written belongs to the same stream.
function M.stream(key, text)
  if text == nil or text == '' then
    return
  end
  local pieces = util.lines(text)
  if state.stream ~= key or state.empty then
    state.stream = key
    append_lines(pieces)
    return
  end
  local buf = M.bufnr()
  with_modifiable(buf, function()
    local last = vim.api.nvim_buf_line_count(buf)
    local line = vim.api.nvim_buf_get_lines(buf, last - 1, last, false)[1] or ''
    pieces[1] = line .. pieces[1]
    vim.api.nvim_buf_set_lines(buf, last - 1, last, false, pieces)
  end)
  follow(buf)
end

--- Ends any stream: the next text starts on its own line.
function M.break_stream()
  state.stream = nil
end

--- Records the lines the assistant stream of `sub` just wrote (from `before`,
--- the line count before the write; `continued`: the write extended the last line).
local function track_block(sub, before, continued)
  local after = vim.api.nvim_buf_line_count(M.bufnr())
  local blocks = state.blocks[sub] or {}
  state.blocks[sub] = blocks
  if continued and #blocks > 0 then
    blocks[#blocks].last = after
  else
    table.insert(blocks, { first = before, last = after })
  end
end

--- assistantRestart: the model's reply starts over, so the text it streamed since
--- the step began goes (otherwise the retried reply shows twice).
local function drop_step(sub)
  local blocks = state.blocks[sub] or {}
  state.blocks[sub] = nil
  state.streamed[sub] = nil
  if state.stream == 'assistant:' .. sub then
    state.stream = nil
  end
  if #blocks == 0 or not valid() then
    return
  end
  local buf = state.bufnr
  with_modifiable(buf, function()
    for i = #blocks, 1, -1 do
      local b = blocks[i]
      vim.api.nvim_buf_set_lines(buf, b.first, b.last, false, {})
      local n = b.last - b.first
      -- the other submissions' ranges below this one move up
      for _, other in pairs(state.blocks) do
        for _, o in ipairs(other) do
          if o.first >= b.last then
            o.first, o.last = o.first - n, o.last - n
          end
        end
      end
    end
  end)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  state.empty = #lines == 1 and lines[1] == ''
  follow(buf)
end

--- Shows the transcript in a window (a split unless it is visible already).
--- With `focus`, moves the cursor there.
function M.open(opts)
  opts = opts or {}
  local buf = M.bufnr()
  local wins = vim.fn.win_findbuf(buf)
  local win = wins[1]
  if not win then
    local cur = vim.api.nvim_get_current_win()
    vim.cmd((opts.split or 'botright split'))
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, buf)
    vim.api.nvim_win_set_option(win, 'wrap', true)
    if not opts.focus then
      vim.api.nvim_set_current_win(cur)
    end
  elseif opts.focus then
    vim.api.nvim_set_current_win(win)
  end
  follow(buf)
  return buf, win
end

--- Clears the transcript.
function M.clear()
  local buf = M.bufnr()
  with_modifiable(buf, function()
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
  end)
  state.empty = true
  state.stream = nil
  state.blocks = {}
  state.nest = {}
end

local function first_line(text)
  text = tostring(text or '')
  local line = text:match('^[^\n]*') or ''
  if #line > 160 then
    line = line:sub(1, 157) .. '...'
  end
  if text:find('\n') then
    line = line .. ' ...'
  end
  return line
end

--- The `task` tool's input (contract section 13): one subagent, several in
--- parallel, or a chain.
local function summarize_task(input)
  local function count(list, what)
    local n = #list
    return string.format('%d subagent%s %s', n, n == 1 and '' or 's', what)
  end
  if type(input.tasks) == 'table' then
    return count(input.tasks, 'in parallel')
  elseif type(input.chain) == 'table' then
    return count(input.chain, 'in a chain')
  elseif input.prompt ~= nil then
    return tostring(input.agent or 'general') .. ': ' .. first_line(input.prompt)
  end
  return nil
end

local function summarize_input(tool, input)
  if type(input) ~= 'table' then
    return ''
  end
  if tool == 'task' then
    local s = summarize_task(input)
    if s then
      return s
    end
  end
  local s = input.command or input.path or input.pattern or input.file_path
  if s then
    return tostring(s)
  end
  local ok, encoded = pcall(vim.fn.json_encode, input)
  encoded = ok and encoded or ''
  if #encoded > 120 then
    encoded = encoded:sub(1, 117) .. '...'
  end
  return encoded
end

--- 12345 -> "12,345".
local function thousands(n)
  local s = tostring(math.floor(tonumber(n) or 0))
  local sign, digits = s:match('^(-?)(%d+)$')
  if not digits then
    return s
  end
  local out = digits:reverse():gsub('(%d%d%d)', '%1,'):reverse()
  if out:sub(1, 1) == ',' then
    out = out:sub(2)
  end
  return sign .. out
end
M.thousands = thousands

local function nest_of(sub)
  local n = state.nest[sub]
  if not n then
    n = { calls = {}, agents = {}, tasks = {} }
    state.nest[sub] = n
  end
  return n
end

--- What a `/task` step's subagent says it does, without what its label says already:
--- "Step <id>: <title>" gives the title; a prompt that starts with the task's goal
--- gives the step's own prompt (after the first paragraph).
local function step_prompt(prompt, step)
  prompt = tostring(prompt or '')
  if step then
    local prefix = 'Step ' .. step .. ': '
    if prompt:sub(1, #prefix) == prefix and #prompt > #prefix then
      return prompt:sub(#prefix + 1)
    end
  end
  if prompt:find('^This is one step of a larger task') then
    local rest = prompt:match('^.-\n%s*\n(.*)$')
    if rest and rest ~= '' then
      return rest
    end
  end
  return prompt
end

--- subagentStarted / subagentFinished: one line each, indented under the call
--- that started the subagent (the `task` tool call, or the `/task` step).
local function subagent_line(ev, sub)
  local n = nest_of(sub)
  if ev.type == 'subagentStarted' then
    local parent = ev.parentCallId ~= nil and tostring(ev.parentCallId) or ''
    local depth = (n.calls[parent] or 0) + 1
    local label = 'subagent ' .. tostring(ev.agentId or ev.agent)
    local task_id, step = parent:match('^(.+):([^:]+)$')
    local prompt = tostring(ev.prompt or '')
    if n.tasks[parent] ~= nil then
      label, depth = tostring(ev.agent), 1 -- the task's planner
    elseif task_id and n.tasks[task_id] ~= nil then
      label = (step == 'report' and 'report' or ('step ' .. step)) .. ' (' .. tostring(ev.agent) .. ')'
      depth = 1
      prompt = step_prompt(prompt, step)
    end
    n.agents[tostring(ev.agentId)] = { label = label, depth = depth }
    M.append(string.rep('  ', depth) .. label .. ' started: ' .. first_line(prompt))
  else
    local a = n.agents[tostring(ev.agentId)] or { label = 'subagent ' .. tostring(ev.agentId), depth = 1 }
    local usage = type(ev.usage) == 'table' and ev.usage or {}
    local tokens = (tonumber(usage.inputTokens) or 0) + (tonumber(usage.outputTokens) or 0)
    M.append(string.format('%s%s %s · %s tokens', string.rep('  ', a.depth), a.label, tostring(ev.status),
      thousands(tokens)))
  end
end

--- taskUpdated: one compact line per change ("task <id>: running 3/12 (25%) · 12,345
--- tokens"); an event that changes nothing shown (a step started) adds no line.
local function task_line(ev, sub)
  local id = tostring(ev.taskId)
  local text
  if ev.status == 'planning' and (tonumber(ev.total) or 0) == 0 then
    text = 'planning'
  else
    text = string.format('%s %s/%s (%s%%)', tostring(ev.status), tostring(ev.completed or 0),
      tostring(ev.total or 0), tostring(ev.percentage or 0))
    if (tonumber(ev.failed) or 0) > 0 then
      text = text .. ', ' .. tostring(ev.failed) .. ' failed'
    end
  end
  local line = string.format('task %s: %s · %s tokens', id, text, thousands(ev.tokensUsed))
  local n = nest_of(sub)
  if n.tasks[id] == line then
    return
  end
  n.tasks[id] = line
  M.append(line)
end

--- Renders one `coder/event` (params already de-nulled).
function M.on_event(ev)
  local t = ev.type
  local sub = ev.submissionId or ''
  if ev.agentId ~= nil then
    -- a subagent's events: its start and end, and its approvals; its streamed text and
    -- tool calls stay out (its answer comes back as the output of the task call)
    if t == 'subagentStarted' or t == 'subagentFinished' then
      subagent_line(ev, sub)
      return
    elseif t == 'toolCallBegin' and ev.callId ~= nil then
      -- a subagent's own `task` call: the subagents it starts go one level deeper
      local a = nest_of(sub).agents[tostring(ev.agentId)]
      nest_of(sub).calls[tostring(ev.callId)] = a and a.depth or 1
      return
    elseif t ~= 'approvalRequested' and t ~= 'approvalResolved' then
      return
    end
  end
  if t == 'userMessage' then
    if not state.empty then
      M.append('')
    end
    M.append('> ' .. (tostring(ev.text or ''):gsub('\n', '\n  ')))
  elseif t == 'assistantDelta' then
    state.streamed[sub] = true
    local key = 'assistant:' .. sub
    if ev.text ~= nil and ev.text ~= '' then
      local continued = state.stream == key and not state.empty
      local before = state.empty and 0 or vim.api.nvim_buf_line_count(M.bufnr())
      M.stream(key, ev.text)
      track_block(sub, before, continued)
    end
  elseif t == 'assistantRestart' then
    drop_step(sub)
  elseif t == 'assistantMessage' then
    state.blocks[sub] = nil
    if not state.streamed[sub] then
      M.append(ev.text or '')
    end
    state.streamed[sub] = nil
    M.break_stream()
  elseif t == 'reasoningDelta' then
    return
  elseif t == 'toolCallBegin' then
    state.blocks[sub] = nil -- a new step begins after the call
    M.append(string.format('* %s %s', tostring(ev.tool), summarize_input(ev.tool, ev.input)))
  elseif t == 'toolCallEnd' then
    M.append(string.format('  %s %s', ev.isError and 'x' or '=', first_line(ev.output)))
  elseif t == 'shellOutput' then
    state.shell_streamed[sub] = true
    M.stream('shell:' .. sub, ev.chunk)
  elseif t == 'shellFinished' then
    local extra = ''
    if ev.timedOut then
      extra = ' (timed out)'
    elseif ev.truncated then
      extra = ' (output truncated)'
    end
    M.append(string.format('[exit %s]%s', tostring(ev.exitCode == nil and '-' or ev.exitCode), extra))
  elseif t == 'editApplied' then
    local path = ev.uri and vim.uri_to_fname(ev.uri) or '?'
    local rel = vim.fn.fnamemodify(path, ':~:.')
    if ev.applied then
      M.append('[edited] ' .. rel)
    else
      M.append('[edit rejected] ' .. rel .. (ev.reason and (': ' .. ev.reason) or ''))
    end
  elseif t == 'approvalRequested' then
    M.append(string.format('[approval?] %s: %s', tostring(ev.tool), tostring(ev.summary or '')))
  elseif t == 'approvalResolved' then
    M.append('  -> ' .. tostring(ev.decision))
  elseif t == 'todoUpdated' then
    local lines = { '[todos]' }
    for _, item in ipairs(ev.todos or {}) do
      local mark = item.status == 'completed' and 'x' or (item.status == 'in_progress' and '~' or ' ')
      table.insert(lines, string.format('  [%s] %s', mark, first_line(item.content)))
    end
    M.append(table.concat(lines, '\n'))
  elseif t == 'sessionChanged' then
    M.append(string.format('--- session %s (%s)', tostring(ev.sessionId), tostring(ev.reason)))
  elseif t == 'modelChanged' then
    M.append(string.format('--- model %s (%s)', tostring(ev.model), tostring(ev.provider)))
  elseif t == 'permissionsChanged' then
    M.append('--- permissions ' .. tostring(ev.preset))
  elseif t == 'taskUpdated' then
    task_line(ev, sub)
  elseif t == 'turnFinished' then
    state.blocks[sub] = nil
    state.nest[sub] = nil
    M.append('--- ' .. tostring(ev.status))
  elseif t == 'error' then
    M.append('! ' .. tostring(ev.message))
  elseif t == 'notice' then
    M.append('- ' .. tostring(ev.message))
  elseif t == 'hookRan' then -- one compact line per hook run
    M.append(string.format('- hook %s %s: %s (%s ms)', tostring(ev.event), tostring(ev.name),
      tostring(ev.decision), tostring(ev.ms)))
  end
  -- contextUsage, commandsChanged and unknown types: nothing to show.
end

--- Renders a command result where the events did not already show it.
function M.on_result(result)
  local sub = result.submissionId or ''
  if result.mode == 'error' then
    local msg = (result.error and result.error.message) or result.reply or 'failed'
    M.append('! ' .. tostring(msg))
  elseif result.mode == 'command' then
    if result.reply and result.reply ~= '' then
      M.append(result.reply)
    end
  elseif result.mode == 'nl' and type(result.data) == 'table' and result.data.kind == 'task' then
    -- a `/task` run: no assistant message carries its outcome, the reply does
    if result.reply and result.reply ~= '' then
      M.append(result.reply)
    end
  elseif result.mode == 'raw' then
    if not state.shell_streamed[sub] and result.rawOutput and result.rawOutput ~= '' then
      M.append(result.rawOutput)
    end
    if result.status == 'cancelled' then
      M.append('--- cancelled')
    end
  end
  state.shell_streamed[sub] = nil
  state.streamed[sub] = nil
  state.blocks[sub] = nil
  M.break_stream()
end

--- The transcript's lines (for tests and scripts).
function M.lines()
  if not valid() then
    return {}
  end
  return vim.api.nvim_buf_get_lines(state.bufnr, 0, -1, false)
end

return M
