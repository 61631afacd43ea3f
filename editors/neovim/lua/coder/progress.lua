-- Work-done progress of the coder clients: which tokens are running (for
-- :CoderInterrupt) and what they are doing (for the statusline).
local M = {}

-- [client_id] = { [key] = { token = <original token>, title, message, seq } }
local active = {}
-- [client_id] = { [key] = true }: tokens that ended. A `begin` or `report` that
-- arrives after the end (the result overtook the progress notification) must
-- not bring the token back: the statusline would say "running" forever.
local ended = {}
local seq = 0
local listeners = {}

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

--- The turn of `submission_id` finished: ends the token the server created for
--- it (`coder/<submissionId>`) in case its `end` never reaches us.
function M.finish_submission(client_id, submission_id)
  if type(submission_id) == 'string' and submission_id ~= '' then
    M.update(client_id, { token = 'coder/' .. submission_id, value = { kind = 'end' } })
  end
end

function M.forget(client_id)
  active[client_id] = nil
  ended[client_id] = nil
  changed()
end

function M.touch()
  changed()
end

return M
