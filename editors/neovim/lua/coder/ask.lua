-- `coder/askUser` for the coder client: the model's `ask_user` questions through
-- vim.ui.select, one question after the other, with an "Other…" item that asks for
-- the answer in the user's own words with vim.ui.input. A multi-select question is
-- asked again until "Done" is picked. Cancelling any picker answers null: the tool
-- then tells the model the user did not answer.
--
-- Like approval.lua: Neovim 0.10+ runs server-request handlers in a coroutine, so
-- the handler yields until the user answers; 0.7-0.9 need the answer as the
-- handler's return value, and an asynchronous picker is waited for with vim.wait.
local M = {}

M.timeout_ms = 10 * 60 * 1000

local OTHER = 'Other…'
local DONE = 'Done'

--- Calls `start(callback)` and returns what the callback got, waiting for it.
local function await(start)
  local done, value = false, nil
  local co = coroutine.running()
  local yieldable = co and (not coroutine.isyieldable or coroutine.isyieldable())
  local yielded = false
  local ok, err = pcall(start, function(v)
    if done then
      return
    end
    done, value = true, v
    if yielded then
      vim.schedule(function()
        coroutine.resume(co)
      end)
    end
  end)
  if not ok then
    vim.notify('coder: ' .. tostring(err), vim.log.levels.ERROR)
    return nil
  end
  if done then
    return value
  end
  if yieldable then
    yielded = true
    coroutine.yield()
    return value
  end
  vim.wait(M.timeout_ms, function()
    return done
  end, 20)
  done = true
  return value
end

local function select(items, prompt)
  return await(function(cb)
    vim.ui.select(items, {
      prompt = prompt,
      kind = 'coder.ask',
      format_item = function(item)
        if item.description and item.description ~= vim.NIL and item.description ~= '' then
          return item.label .. ' — ' .. item.description
        end
        return item.label
      end,
    }, cb)
  end)
end

local function own_words(question)
  local text = await(function(cb)
    vim.ui.input({ prompt = question .. ' (your answer): ' }, cb)
  end)
  if type(text) == 'string' and text:match('%S') then
    return text
  end
  return nil
end

--- One question: {selected = {...}, other = str?}, or nil when cancelled.
local function ask_one(n, total, q)
  local head = (q.header and q.header ~= vim.NIL) and ('[' .. q.header .. '] ') or ''
  local prompt = string.format('coder asks (%d/%d): %s%s', n, total, head, q.question)
  local chosen, other = {}, nil
  while true do
    local items = {}
    for _, o in ipairs(q.options or {}) do
      if not vim.tbl_contains(chosen, o.label) then
        table.insert(items, o)
      end
    end
    table.insert(items, { label = OTHER })
    if q.multiSelect and (#chosen > 0 or other) then
      table.insert(items, { label = DONE, description = table.concat(chosen, ', ') })
    end
    local pick = select(items, prompt)
    if type(pick) ~= 'table' then
      return nil
    end
    if pick.label == DONE then
      break
    elseif pick.label == OTHER then
      other = own_words(q.question)
      if not other then
        return nil
      end
    else
      table.insert(chosen, pick.label)
    end
    if not q.multiSelect then
      break
    end
  end
  return { selected = chosen, other = other }
end

--- The handler: function(err, params, ctx) -> {answers = [...] | vim.NIL}
function M.handler(_, params)
  local questions = (params and params.questions) or {}
  local answers = {}
  for n, q in ipairs(questions) do
    local a = ask_one(n, #questions, q)
    if not a then
      return { answers = vim.NIL }
    end
    answers[n] = a
  end
  return { answers = answers }
end

return M
