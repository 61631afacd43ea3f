-- Drives CodeCompanion's own ACP client (lua/codecompanion/acp) against `coder-ls --acp`,
-- headless, with the configuration block of docs/editors.md (CONFIG). Writes what the
-- client saw as JSON to OUT. Run by tests/editors/test_codecompanion_acp.py:
--   nvim --headless -u NONE -i NONE -l driver_codecompanion.lua
local out_path = assert(os.getenv("OUT"))
vim.opt.rtp:prepend(assert(os.getenv("CODECOMPANION")))
vim.opt.rtp:prepend(assert(os.getenv("PLENARY")))
dofile(assert(os.getenv("CONFIG")))

local Connection = require("codecompanion.acp")
local adapters = require("codecompanion.adapters")
local acp_commands = require("codecompanion.interactions.chat.acp.commands")

local report = { steps = {} }
local function finish(err)
  report.error = err
  vim.fn.writefile({ vim.json.encode(report) }, out_path)
  vim.cmd("qa!")
end

local function connect(session_id)
  local adapter = adapters.resolve("coder_ls")
  local conn = Connection.new({ adapter = adapter, session_id = session_id })
  return conn
end

-- One prompt: every update, the permission questions (answered with the option of
-- `answer_kind`), and how it ended. `on_chunk(prompt)` may cancel it.
local function run_prompt(conn, text, answer_kind, on_chunk)
  local step = { text = text, chunks = {}, tool_calls = {}, tool_updates = {}, permissions = {}, plans = {} }
  local done = false
  local prompt
  prompt = conn
    :session_prompt({ { role = "user", content = text, _meta = { sent = false } } })
    :on_message_chunk(function(chunk)
      table.insert(step.chunks, chunk)
      if on_chunk then
        on_chunk(prompt)
        on_chunk = nil
      end
    end)
    :on_tool_call(function(call)
      table.insert(step.tool_calls, call)
    end)
    :on_tool_update(function(update)
      table.insert(step.tool_updates, update)
    end)
    :on_plan(function(entries)
      table.insert(step.plans, entries)
    end)
    :on_permission_request(function(request)
      local kinds = {}
      local chosen
      for _, option in ipairs(request.options) do
        table.insert(kinds, { name = option.name, kind = option.kind })
        if option.kind == answer_kind and not chosen then
          chosen = option.optionId
        end
      end
      table.insert(step.permissions, { tool_call = request.tool_call, options = kinds })
      request.respond(chosen, chosen == nil)
    end)
    :on_complete(function(stop_reason)
      step.stop_reason = stop_reason
      done = true
    end)
    :on_error(function(err)
      step.error = err
      done = true
    end)
    :on_cancel(function()
      step.cancelled_by_user = true
    end)
  local job = prompt:send()
  if not vim.wait(60000, function()
    -- after a cancel CodeCompanion no longer routes the prompt's answer to the builder:
    -- it is kept with the other responses
    local answer = step.cancelled_by_user and conn.pending_responses[prompt._request_id]
    if answer then
      step.stop_reason = answer[1] and answer[1].stopReason
      done = true
    end
    return done
  end, 20) then
    step.timed_out = true
    job.cancel()
  end
  table.insert(report.steps, step)
  return step
end

local ok, err = pcall(function()
  local conn = connect(nil)
  assert(conn:connect_and_initialize(), "connect_and_initialize failed")
  report.session_id = conn.session_id
  report.agent_info = conn._agent_info

  -- a tool call with a diff, after a permission asked and answered (Allow once)
  run_prompt(conn, "fix add", "allow_once")
  vim.wait(2000, function()
    return acp_commands.get_commands_for_session(conn.session_id) ~= nil
  end, 20)
  local commands = acp_commands.get_commands_for_session(conn.session_id) or {}
  report.commands = vim.tbl_map(function(c)
    return c.name
  end, commands)
  -- a slash command
  run_prompt(conn, "/help", "allow_once")
  -- cancel: the model's stream hangs; the user cancels after the first words
  run_prompt(conn, "talk for a long time", "allow_once", function(prompt)
    vim.defer_fn(function()
      prompt:cancel()
    end, 50)
  end)
  -- /undo over ACP
  run_prompt(conn, "/undo", "allow_once")
  conn:disconnect()
  vim.wait(1500)

  -- session load in a new agent process: the history comes back as updates
  local again = connect(report.session_id)
  assert(again:connect_and_authenticate(), "second connect failed")
  local replayed = {}
  assert(
    again:load_session(report.session_id, {
      on_session_update = function(update)
        table.insert(replayed, update)
      end,
    }),
    "session/load failed"
  )
  report.replayed = replayed
  again:disconnect()
end)
finish(not ok and tostring(err) or nil)
