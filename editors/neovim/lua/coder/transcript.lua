-- The `coder://transcript` scratch buffer: every `coder/event` rendered as text,
-- streamed as it arrives (assistant deltas and shell chunks extend the last line).
-- A tool call is one line in the user's words (coder/sentence.lua), written when it
-- begins and rewritten in place with its outcome when it ends; what it printed goes
-- under it as detail lines (`  │ `), which a window showing the buffer folds.
local sentence = require('coder.sentence')
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
  -- [callId] = the main agent's tool call: {mark (extmark of its line), tool, input,
  --   output, done, started, ended, exit_code, timed_out, approval, edits}
  calls = {},
  -- [callId] = {mark, summary, decision}: an approval asked about no call shown here
  approvals = {},
  -- [file path] = { {added, removed}, ... }: what the edits being applied change, until
  --   their editApplied (noted by the workspace/applyEdit handler)
  diffs = {},
  root = nil, -- the workspace folder: paths are shown relative to it
}

local ns = vim.api.nvim_create_namespace('coder_transcript')

--- The prefix of a tool call's detail lines (its output, a failed call's input).
M.detail = '  │ '

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

--- Appends one line and marks it (an extmark that follows it as lines come and go).
local function append_marked(line)
  state.stream = nil
  append_lines({ line })
  local buf = M.bufnr()
  return vim.api.nvim_buf_set_extmark(buf, ns, vim.api.nvim_buf_line_count(buf) - 1, 0, {})
end

--- Rewrites the line of extmark `mark`.
local function set_marked(mark, line)
  local buf = M.bufnr()
  local pos = vim.api.nvim_buf_get_extmark_by_id(buf, ns, mark, {})
  if not pos or pos[1] == nil then
    return
  end
  with_modifiable(buf, function()
    vim.api.nvim_buf_set_lines(buf, pos[1], pos[1] + 1, false, { line })
  end)
  vim.api.nvim_buf_set_extmark(buf, ns, pos[1], 0, { id = mark })
end

--- For a window showing the transcript: the detail lines are folded (`zo` opens them).
function M.foldexpr(lnum)
  local line = vim.fn.getline(lnum)
  return line:sub(1, #M.detail) == M.detail and '1' or '0'
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
--- thing written belongs to the same stream. `prefix` starts each new line.
function M.stream(key, text, prefix)
  if text == nil or text == '' then
    return
  end
  local pieces = util.lines(text)
  if prefix then
    for i = 2, #pieces do
      pieces[i] = prefix .. pieces[i]
    end
    if state.stream ~= key or state.empty then
      pieces[1] = prefix .. pieces[1]
    end
  end
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
    -- a tool call's details (its output) folded under its line
    vim.api.nvim_win_set_option(win, 'foldmethod', 'expr')
    vim.api.nvim_win_set_option(win, 'foldexpr', "v:lua.require'coder.transcript'.foldexpr(v:lnum)")
    vim.api.nvim_win_set_option(win, 'foldlevel', 0)
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
  state.calls = {}
  state.approvals = {}
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
end

--- What an edit being applied to `uri` changes (from the workspace/applyEdit handler):
--- the editApplied that follows carries it to the line of its call.
function M.note_diff(uri, added, removed)
  local path = vim.uri_to_fname(uri)
  state.diffs[path] = state.diffs[path] or {}
  table.insert(state.diffs[path], { added = added, removed = removed })
end

local function take_diff(uri)
  local path = vim.uri_to_fname(uri)
  local queue = state.diffs[path]
  local d = queue and table.remove(queue, 1) or nil
  if queue and #queue == 0 then
    state.diffs[path] = nil
  end
  return d
end

local function clock()
  return vim.loop.hrtime() / 1e9
end

--- Rewrites the line of a tool call from what is known of it now.
local function redraw_call(call)
  local line, failed = sentence.tool(call, state.root)
  local mark = not call.done and ((call.approval and call.approval.decision == nil) and '? ' or '* ')
    or (failed and 'x ' or '* ')
  set_marked(call.mark, string.rep('  ', call.depth or 0) .. mark .. line)
end

--- A failed call's details under its line (folded): the rest of its error, its input.
local function call_details(call)
  local out = {}
  local output = sentence.rel_text(call.output or '', state.root)
  local rest = util.lines(output)
  if #rest > 1 then
    for _, l in ipairs(rest) do
      table.insert(out, M.detail .. l)
    end
  end
  for k, v in pairs(type(call.input) == 'table' and call.input or {}) do
    local text = type(v) == 'string' and v or vim.fn.json_encode(v)
    local lines = util.lines(sentence.rel_text(text, state.root))
    table.insert(out, M.detail .. tostring(k) .. ': ' .. (lines[1] or ''))
    for i = 2, #lines do
      table.insert(out, M.detail .. '  ' .. lines[i])
    end
  end
  if #out > 0 then
    M.break_stream()
    append_lines(out)
  end
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
    M.append(string.format('%s%s %s · %s tokens', string.rep('  ', a.depth), a.label, sentence.status(ev.status),
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

local HOOK_DECISIONS = {
  allow = 'allowed',
  deny = 'denied',
  ask = 'asked you',
  block = 'blocked',
  none = 'no decision',
  failed = 'failed',
}

--- The main agent's tool call still open in submission `sub` (`edits`: one that edits files).
local function open_call(sub, edits)
  local found
  for _, call in pairs(state.calls) do
    if call.sub == sub and not call.done then
      if not edits or call.tool == 'edit' or call.tool == 'multiEdit' or call.tool == 'write' then
        if not found or call.started > found.started then
          found = call
        end
      end
    end
  end
  return found
end

--- Renders one `coder/event` (params already de-nulled). `root`: the workspace folder
--- of the client it came from (paths are shown relative to it).
function M.on_event(ev, root)
  local t = ev.type
  local sub = ev.submissionId or ''
  if root then
    state.root = root
  end
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
    local call = { tool = tostring(ev.tool), input = ev.input, sub = sub, done = false, started = clock(), edits = {} }
    call.mark = append_marked('')
    state.calls[tostring(ev.callId)] = call
    redraw_call(call)
  elseif t == 'toolCallEnd' then
    local call = state.calls[tostring(ev.callId)]
    if not call then
      call = { tool = '?', input = {}, sub = sub, edits = {} }
      call.mark = append_marked('')
      state.calls[tostring(ev.callId)] = call
    end
    call.done, call.output, call.is_error, call.ended = true, ev.output or '', ev.isError == true, clock()
    redraw_call(call)
    local _, failed = sentence.tool(call, state.root)
    if failed then
      call_details(call)
    end
  elseif t == 'shellOutput' then
    state.shell_streamed[sub] = true
    local call = open_call(sub)
    -- the agent's command's output: details under its call (folded in a window)
    M.stream('shell:' .. sub, ev.chunk, call and M.detail or nil)
  elseif t == 'shellFinished' and open_call(sub) then
    local call = open_call(sub)
    call.exit_code, call.timed_out = ev.exitCode, ev.timedOut == true
    if state.stream == 'shell:' .. sub then -- the output's last newline left an empty detail line
      local buf = M.bufnr()
      local last = vim.api.nvim_buf_line_count(buf)
      if vim.api.nvim_buf_get_lines(buf, last - 1, last, false)[1] == M.detail then
        with_modifiable(buf, function()
          vim.api.nvim_buf_set_lines(buf, last - 1, last, false, {})
        end)
      end
    end
    M.break_stream()
  elseif t == 'shellFinished' then
    local extra = ''
    if ev.timedOut then
      extra = ' (timed out)'
    elseif ev.truncated then
      extra = ' (output truncated)'
    end
    M.append(string.format('[exit %s]%s', tostring(ev.exitCode == nil and '-' or ev.exitCode), extra))
  elseif t == 'editApplied' then
    local diff = ev.uri and take_diff(ev.uri) or nil
    local edit = { applied = ev.applied == true, added = diff and diff.added, removed = diff and diff.removed }
    local call = open_call(sub, true)
    if call then
      table.insert(call.edits, edit) -- one line: the call's, with what it changed
      return
    end
    local rel = sentence.rel(ev.uri or '?', state.root)
    if ev.applied then
      M.append('* Edited ' .. rel .. (diff and string.format(' (+%d −%d)', diff.added, diff.removed) or ''))
    else
      M.append('x Did not edit ' .. rel .. (ev.reason and (': ' .. sentence.rel_text(ev.reason, state.root)) or ''))
    end
  elseif t == 'approvalRequested' then
    local call = state.calls[tostring(ev.callId)]
    if call and not call.done then
      call.approval = { decision = nil }
      redraw_call(call)
    else
      local a = { summary = sentence.rel_text(ev.summary or '', state.root) }
      a.mark = append_marked('? Coder asked to ' .. a.summary .. ' · waiting for your answer')
      state.approvals[tostring(ev.callId)] = a
    end
  elseif t == 'approvalResolved' then
    local call = state.calls[tostring(ev.callId)]
    local a = state.approvals[tostring(ev.callId)]
    if call and call.approval then
      call.approval.decision = ev.decision
      redraw_call(call)
    elseif a then
      set_marked(a.mark, '* Coder asked to ' .. a.summary .. ' · ' .. sentence.decision(ev.decision))
      state.approvals[tostring(ev.callId)] = nil
    end
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
  elseif t == 'planProposed' then
    M.append('[plan]\n' .. tostring(ev.plan or '') .. '\n(:CoderPlan approve [preset] | revise <feedback> | reject)')
  elseif t == 'taskUpdated' then
    task_line(ev, sub)
  elseif t == 'turnFinished' then
    state.blocks[sub] = nil
    state.nest[sub] = nil
    for id, call in pairs(state.calls) do
      if call.sub == sub then
        if not call.done then -- the turn ended first (stopped): say so on its line
          call.done, call.cancelled, call.ended = true, ev.status ~= 'completed', clock()
          if call.approval and call.approval.decision == nil then
            call.approval.decision = 'cancelled'
          end
          redraw_call(call)
        end
        state.calls[id] = nil
      end
    end
    for id, a in pairs(state.approvals) do
      set_marked(a.mark, '* Coder asked to ' .. a.summary .. ' · ' .. sentence.decision('cancelled'))
      state.approvals[id] = nil
    end
    M.append('--- ' .. sentence.status(ev.status))
  elseif t == 'error' then
    M.append('! ' .. tostring(ev.message))
  elseif t == 'notice' then
    M.append('- ' .. tostring(ev.message))
  elseif t == 'hookRan' then -- one compact line per hook run
    M.append(string.format('- hook %s %s: %s (%s ms)', tostring(ev.event), tostring(ev.name),
      HOOK_DECISIONS[ev.decision] or tostring(ev.decision), tostring(ev.ms)))
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
