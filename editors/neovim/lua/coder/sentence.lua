-- A tool call as one line in the user's words, with its outcome: "Edited a.txt (+1 −1)",
-- "Ran `make` · exit 0 · 1.2 s", "Searched for `foo` · 3 matches in 2 files", "Could not
-- edit a.txt: oldString was not found in a.txt." The same words as the VS Code chat
-- (editors/vscode/src/sentences.ts); the protocol's names (`allowOnce`, `completed`, the
-- tools' ids) stay out of it.
local M = {}

-- progressive, past, and "could not ..." forms
local VERBS = {
  read = { 'Reading', 'Read', 'read' },
  write = { 'Writing', 'Wrote', 'write' },
  edit = { 'Editing', 'Edited', 'edit' },
  multiEdit = { 'Editing', 'Edited', 'edit' },
  bash = { 'Running', 'Ran', 'run' },
  grep = { 'Searching for', 'Searched for', 'search for' },
  glob = { 'Looking for files matching', 'Looked for files matching', 'look for files matching' },
  ls = { 'Listing', 'Listed', 'list' },
  task = { 'Running', 'Ran', 'run' },
  ask_user = { 'Asking you', 'Asked you', 'ask you' },
  todoWrite = { 'Updating the to-do list', 'Updated the to-do list', 'update the to-do list' },
  todoRead = { 'Reading the to-do list', 'Read the to-do list', 'read the to-do list' },
  plan = { 'Planning', 'Planned', 'plan' },
  skill = { 'Loading the skill', 'Loaded the skill', 'load the skill' },
  report_findings = { 'Reporting', 'Reported', 'report' },
}

local DECISIONS = {
  allowOnce = 'allowed once',
  allowSession = 'allowed for this session',
  alwaysAllow = 'always allowed',
  deny = 'denied',
  cancelled = 'question withdrawn',
}

--- An approval's decision in words (`approvalResolved.decision`).
function M.decision(d)
  d = tostring(d or '')
  return DECISIONS[d] or d:gsub('(%l)(%u)', '%1 %2'):lower()
end

local STATUS = { completed = 'done', cancelled = 'stopped', failed = 'failed' }

--- A subagent's or a turn's status in words.
function M.status(s)
  return STATUS[s] or tostring(s)
end

local function str(v)
  return type(v) == 'string' and v or ''
end

local function first_line(text, max)
  max = max or 160
  local line = vim.trim(tostring(text or '')):match('^[^\n]*') or ''
  if vim.fn.strchars(line) > max then
    line = vim.fn.strcharpart(line, 0, max - 1) .. '…'
  end
  return line
end

local function plural(n, one, many)
  return string.format('%d %s', n, n == 1 and one or (many or one .. 's'))
end

--- `path` (or a file: URI) relative to `root`; as it is outside it.
function M.rel(path, root)
  path = tostring(path or '')
  if path:match('^file://') then
    path = vim.uri_to_fname(path)
  end
  if root and root ~= '' then
    local r = root:gsub('/+$', '')
    if path == r then
      return '.'
    end
    if path:sub(1, #r + 1) == r .. '/' then
      return path:sub(#r + 2)
    end
  end
  return path
end

--- `text` with the workspace folder's absolute prefix dropped.
function M.rel_text(text, root)
  text = tostring(text or '')
  if not root or #root < 2 then
    return text
  end
  local prefix = root:gsub('/+$', '') .. '/'
  local out, at = {}, 1
  while true do
    local i, j = text:find(prefix, at, true)
    if not i then
      break
    end
    table.insert(out, text:sub(at, i - 1))
    at = j + 1
  end
  table.insert(out, text:sub(at))
  return table.concat(out)
end

--- 0.04 s -> "0.0 s", 12.5 -> "13 s", 125 -> "2 min 5 s".
function M.seconds(s)
  if s < 10 then
    return string.format('%.1f s', s)
  elseif s < 60 then
    return string.format('%d s', math.floor(s + 0.5))
  end
  local m = math.floor(s / 60)
  return string.format('%d min %d s', m, math.floor(s - 60 * m + 0.5))
end

local function count_lines(output, pred)
  local n = 0
  for line in (output .. '\n'):gmatch('([^\n]*)\n') do
    if line ~= '' and pred(line) then
      n = n + 1
    end
  end
  return n
end

local function target_of(call, root)
  local input = type(call.input) == 'table' and call.input or {}
  local tool = call.tool
  local path = str(input.path) ~= '' and str(input.path) or str(input.filePath) ~= '' and str(input.filePath)
    or str(input.file_path)
  if tool == 'bash' then
    return '`' .. first_line(input.command, 120) .. '`'
  elseif tool == 'grep' or tool == 'glob' then
    return '`' .. str(input.pattern) .. '`'
  elseif tool == 'ls' then
    return M.rel(path ~= '' and path or '.', root)
  elseif tool == 'task' then
    if type(input.tasks) == 'table' then
      return plural(#input.tasks, 'subagent') .. ' in parallel'
    elseif type(input.chain) == 'table' then
      return 'a chain of ' .. plural(#input.chain, 'subagent')
    end
    local agent = str(input.agent)
    local prompt = first_line(input.prompt, 100)
    return (agent ~= '' and ('the ' .. agent .. ' subagent') or 'a subagent') .. (prompt ~= '' and (': ' .. prompt) or '')
  elseif tool == 'ask_user' then
    local q = type(input.questions) == 'table' and input.questions[1] or nil
    return q and first_line(q.question, 100) or nil
  elseif tool == 'plan' then
    return type(input.steps) == 'table' and plural(#input.steps, 'step') or nil
  elseif tool == 'skill' then
    return str(input.name) ~= '' and ('`' .. input.name .. '`') or nil
  elseif tool == 'todoWrite' or tool == 'todoRead' or tool == 'report_findings' then
    return nil
  end
  if path ~= '' then
    return M.rel(path, root)
  end
  if VERBS[tool] then
    return nil
  end
  return '`' .. tostring(tool) .. '`'
end

--- What a finished call found or changed: facts after the sentence.
local function outcome(call, facts)
  local input = type(call.input) == 'table' and call.input or {}
  local output = tostring(call.output or '')
  local tool = call.tool
  if tool == 'bash' then
    local code = call.exit_code
    if code == nil then
      code = tonumber(output:match('%[exit code: (%-?%d+)%]%s*$'))
    end
    if call.timed_out then
      table.insert(facts, 'timed out')
    elseif code ~= nil and code ~= vim.NIL then
      table.insert(facts, 'exit ' .. tostring(code))
    end
  elseif output == '' then
    return
  elseif tool == 'grep' then
    if output:match('^No matches') then
      table.insert(facts, 'no matches')
    else
      local matches = count_lines(output, function(l)
        return l:match('^%d+[:-]') ~= nil
      end)
      local files = count_lines(output, function(l)
        -- not the server's note on unsaved editor buffers (contract section 23)
        return not l:match('^%d+[:-]') and not l:match('^%.%.%. ') and not l:match('^%(.*unsaved editor buffer.*%)$')
      end)
      local more = output:match('\n%.%.%. ') and 'more than ' or ''
      table.insert(facts, more .. plural(matches, 'match', 'matches') .. (files > 1 and (' in ' .. plural(files, 'file')) or ''))
    end
  elseif tool == 'glob' or tool == 'ls' then
    if output:match('^No files match') then
      table.insert(facts, 'no files')
    elseif output:match('%(empty directory%)') then
      table.insert(facts, 'empty')
    else
      local n = count_lines(output, function(l)
        return not l:match('^%.%.%. ') and not l:match('^%(')
      end)
      table.insert(facts, tool == 'glob' and plural(n, 'file') or plural(n, 'entry', 'entries'))
    end
  elseif tool == 'todoWrite' and type(input.todos) == 'table' then
    local done = 0
    for _, t in ipairs(input.todos) do
      if type(t) == 'table' and t.status == 'completed' then
        done = done + 1
      end
    end
    table.insert(facts, string.format('%d of %d done', done, #input.todos))
  end
end

--- One tool call as a line. `call`: {tool, input, output, is_error, done, cancelled,
--- started, ended (seconds), exit_code, timed_out, approval = {decision}, edits = {{applied,
--- added, removed}}}. Returns the line and whether the call failed.
function M.tool(call, root)
  local verbs = VERBS[call.tool] or { 'Using', 'Used', 'use' }
  local target = target_of(call, root)
  local decision = call.approval and call.approval.decision or nil
  local function line(lead, after, facts, why)
    local s = lead .. (target and (' ' .. target) or '') .. (after or '')
    if not call.done then
      s = s .. '…'
    end
    if why then
      s = s .. ': ' .. why
    end
    if facts and #facts > 0 then
      s = s .. ' · ' .. table.concat(facts, ' · ')
    end
    return s
  end
  if not call.done then
    local facts = {}
    if call.approval and decision == nil then
      table.insert(facts, 'waiting for your answer')
    elseif decision then
      table.insert(facts, M.decision(decision))
    end
    return line(verbs[1], nil, facts), false
  end
  local edits = call.edits or {}
  local applied, added, removed, counted = false, 0, 0, false
  for _, e in ipairs(edits) do
    if e.applied then
      applied = true
      if e.added then
        counted = true
        added, removed = added + e.added, removed + (e.removed or 0)
      end
    end
  end
  if call.cancelled and (call.output or '') == '' then
    return 'Stopped before it could ' .. verbs[3] .. (target and (' ' .. target) or ''), true
  end
  if (call.is_error and not applied) or (#edits > 0 and not applied) then
    if decision == 'deny' or decision == 'cancelled' or #edits > 0 then
      return line('Did not ' .. verbs[3], nil, { #edits > 0 and 'rejected' or M.decision(decision or 'deny') }), true
    end
    local text = tostring(call.output or ''):gsub('^Error:%s*', '')
    local why = M.rel_text(first_line(text), root)
    return line('Could not ' .. verbs[3], nil, nil, why ~= '' and why or 'it failed'), true
  end
  local facts = {}
  local lead = verbs[2]
  if call.tool == 'write' then
    local out = tostring(call.output or '')
    if out:match('^Created ') then
      lead = 'Created'
    elseif applied then
      lead = 'Edited'
    end
  end
  outcome(call, facts)
  if call.is_error and applied then
    table.insert(facts, 'some changes rejected')
  end
  if decision then
    table.insert(facts, M.decision(decision))
  end
  if call.started and call.ended and (call.tool == 'bash' or call.tool == 'task') then
    table.insert(facts, M.seconds(call.ended - call.started))
  end
  local after = counted and string.format(' (+%d −%d)', added, removed) or nil
  return line(lead, after, facts), false
end

return M
