-- Plan mode (contract section 22): `:Coder /plan <prompt>` makes the agent read and
-- search, never write, and end with a plan (the `planProposed` event). This module
-- remembers each client's latest plan and answers it with `coder.plan {submissionId,
-- action, feedback?, mode?}`: `:CoderPlan approve [preset]`, `:CoderPlan revise <what to
-- change>`, `:CoderPlan reject`, or the choice vim.ui.select offers when the turn ends.
local M = {}

M.PRESETS = { 'balanced', 'auto-edit', 'strict', 'yolo' }
M.ACTIONS = { 'approve', 'revise', 'reject' }

-- client id -> the submissionId of the plan awaiting an answer
local latest = {}
-- client ids whose plan arrived in the running turn: offered when it finishes
local to_offer = {}

function M.on_event(client_id, ev)
  if ev.type == 'planProposed' and type(ev.submissionId) == 'string' then
    latest[client_id] = ev.submissionId
    to_offer[client_id] = true
  end
end

function M.pending(client_id)
  return latest[client_id]
end

--- Answers the client's latest plan. execute: init.lua's M.execute.
function M.answer(execute, client_id, action, arg, on_done)
  local sub = latest[client_id]
  if not sub then
    return vim.notify('coder: no plan awaits an answer', vim.log.levels.INFO)
  end
  local args = { submissionId = sub, action = action }
  if action == 'approve' and arg and arg ~= '' then
    args.mode = arg
  elseif action == 'revise' then
    if not arg or arg == '' then
      return vim.notify('coder: say what to change: :CoderPlan revise <feedback>', vim.log.levels.WARN)
    end
    args.feedback = arg
  end
  latest[client_id] = nil
  execute('coder.plan', args, on_done, { client_id = client_id })
end

--- After the turn that proposed a plan: Approve (in a preset) / Revise / Reject.
function M.offer(execute, client_id)
  if not to_offer[client_id] then
    return
  end
  to_offer[client_id] = nil
  local items = {}
  for _, p in ipairs(M.PRESETS) do
    table.insert(items, { action = 'approve', mode = p, label = 'Approve (run it in ' .. p .. ')' })
  end
  table.insert(items, { action = 'revise', label = 'Revise (say what to change)' })
  table.insert(items, { action = 'reject', label = 'Reject (end plan mode)' })
  vim.schedule(function()
    vim.ui.select(items, {
      prompt = 'Coder proposed a plan',
      kind = 'coder.plan',
      format_item = function(item)
        return item.label
      end,
    }, function(choice)
      if not choice then
        return -- answered later with :CoderPlan
      end
      if choice.action == 'revise' then
        vim.ui.input({ prompt = 'What should change in the plan? ' }, function(text)
          if text and text ~= '' then
            M.answer(execute, client_id, 'revise', text)
          end
        end)
      else
        M.answer(execute, client_id, choice.action, choice.mode)
      end
    end)
  end)
end

function M.complete(arglead, cmdline)
  local words = vim.split(cmdline, '%s+', { trimempty = true })
  local list = (#words <= 1 or (#words == 2 and arglead ~= '')) and M.ACTIONS or (words[2] == 'approve' and M.PRESETS or {})
  return vim.tbl_filter(function(x)
    return x:sub(1, #arglead) == arglead
  end, list)
end

return M
