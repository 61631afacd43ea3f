-- `window/showMessageRequest` for the coder client: the approval prompts
-- ("Allow once", "Allow for session", "Always allow", "Deny") and the
-- confirmations (`/undo --all`) go through vim.ui.select.
--
-- Neovim 0.10+ runs server-request handlers in a coroutine, so the handler
-- yields until the user picks (any vim.ui.select implementation works, and the
-- editor stays responsive). Neovim 0.7-0.9 needs the answer as the handler's
-- return value: a synchronous vim.ui.select (the built-in one) answers at
-- once; an asynchronous one is waited for with vim.wait, up to
-- `approval_timeout_ms`, after which the request is answered with null
-- (dismissed).
local M = {}

M.timeout_ms = 10 * 60 * 1000

-- Set while a question is open (for the statusline).
M.pending = nil

local listeners = {}

function M.on_change(fn)
  table.insert(listeners, fn)
end

local function changed()
  for _, fn in ipairs(listeners) do
    pcall(fn)
  end
  pcall(vim.cmd, 'redrawstatus')
end

local function can_yield()
  local co = coroutine.running()
  if not co then
    return nil
  end
  if coroutine.isyieldable and not coroutine.isyieldable() then
    return nil
  end
  return co
end

local function level_name(t)
  return ({ 'Error', 'Warning', 'Info', 'Log' })[t or 4] or 'Info'
end

--- The handler: function(err, params, ctx) -> {title=...} | vim.NIL
function M.handler(_, params, ctx)
  params = params or {}
  local actions = params.actions
  if actions == vim.NIL or type(actions) ~= 'table' or #actions == 0 then
    -- No choices: it is only a message.
    vim.notify('coder: ' .. tostring(params.message or ''), vim.log.levels.INFO)
    return vim.NIL
  end

  local answered, answer = false, vim.NIL
  local co = can_yield()
  local yielded = false
  local on_choice
  M.pending = {
    message = params.message,
    client_id = ctx and ctx.client_id,
    dismiss = function()
      on_choice(nil)
    end,
  }
  changed()

  on_choice = function(choice)
    if answered then
      return
    end
    answered = true
    if type(choice) == 'table' and choice.title then
      answer = { title = choice.title }
    else
      answer = vim.NIL
    end
    M.pending = nil
    changed()
    if yielded then
      vim.schedule(function()
        coroutine.resume(co)
      end)
    end
  end

  local ok, err = pcall(vim.ui.select, actions, {
    prompt = string.format('coder [%s]: %s', level_name(params.type), tostring(params.message or '')),
    kind = 'coder.approval',
    format_item = function(item)
      return item.title
    end,
  }, on_choice)
  if not ok then
    vim.notify('coder: vim.ui.select failed: ' .. tostring(err), vim.log.levels.ERROR)
    on_choice(nil)
  end

  if answered then
    return answer
  end
  if co then
    yielded = true
    coroutine.yield()
    return answer
  end
  vim.wait(M.timeout_ms, function()
    return answered
  end, 20)
  if not answered then
    answered = true
    M.pending = nil
    changed()
  end
  return answer
end

--- The turn of `client_id` finished (interrupted, or the server stopped waiting):
--- its open question is moot. Answers it as dismissed and clears the statusline.
function M.turn_finished(client_id)
  local p = M.pending
  if p and (p.client_id == nil or p.client_id == client_id) then
    p.dismiss()
  end
end

return M
