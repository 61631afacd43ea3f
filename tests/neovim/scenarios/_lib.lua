-- Shared helpers of the Neovim scenarios: each scenario runs in
--   nvim --headless -u NONE -i NONE --cmd 'set rtp+=<repo>/editors/neovim' -c 'luafile <scenario>'
-- with CODER_TEST_CMD (a JSON list: the server command), CODER_TEST_RESULT
-- (where to write the JSON the pytest side asserts on) and optionally
-- CODER_TEST_SETUP (a JSON object of extra setup() options).
local T = { result = { events = {}, notifications = {} } }

local function write_result()
  local ok, encoded = pcall(vim.fn.json_encode, T.result)
  if not ok then
    encoded = vim.fn.json_encode({ error = 'could not encode the result: ' .. tostring(encoded),
      dump = vim.inspect(T.result) })
  end
  vim.fn.writefile({ encoded }, vim.env.CODER_TEST_RESULT)
end

function T.setup(extra)
  -- Record notifications (errors included) for the report.
  vim.notify = function(msg, level)
    table.insert(T.result.notifications, { msg = tostring(msg), level = level })
  end
  -- CODER_TEST_SETUP (optional, a JSON object): more setup() options from the test.
  local from_env = {}
  if vim.env.CODER_TEST_SETUP and vim.env.CODER_TEST_SETUP ~= '' then
    from_env = vim.fn.json_decode(vim.env.CODER_TEST_SETUP)
  end
  local opts = vim.tbl_extend('force', {
    cmd = vim.fn.json_decode(vim.env.CODER_TEST_CMD),
    open_transcript = false,
  }, from_env, extra or {})
  local coder = require('coder').setup(opts)
  coder.on_event(function(ev)
    table.insert(T.result.events, ev.type)
  end)
  return coder
end

--- vim.wait that records a timeout and stops the scenario.
function T.wait(ms, cond, what)
  if not vim.wait(ms, cond, 20) then
    error('timeout (' .. ms .. ' ms) waiting for ' .. what, 0)
  end
end

--- The client once initialized (the scenario fails otherwise).
function T.client(timeout)
  local coder = require('coder')
  local client
  coder.with_client({}, function(c, err)
    client = c or false
    T.result.client_error = err
  end)
  T.wait(timeout or 20000, function()
    return client ~= nil
  end, 'the client to initialize')
  if not client then
    error('no client: ' .. tostring(T.result.client_error), 0)
  end
  return client
end

--- After an agent edit of `buf`: waits for the plugin to save it (when
--- save_edited_files is on), then records the buffer, 'modified' and the disk.
function T.record_saved(buf)
  local coder = require('coder')
  local modified = function()
    return vim.api.nvim_buf_get_option(buf, 'modified')
  end
  if coder.config.save_edited_files then
    T.wait(5000, function()
      return not modified()
    end, 'the edited buffer to be saved')
  else
    vim.wait(300) -- room for a save that should not happen
  end
  T.result.save_edited_files = coder.config.save_edited_files
  T.result.buffer = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  T.result.modified = modified()
  T.result.disk = vim.fn.readfile(vim.api.nvim_buf_get_name(buf))
  -- every loaded file buffer (the agent may have edited files that were not open)
  T.result.loaded_buffers = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.api.nvim_buf_get_name(b) ~= '' then
      table.insert(T.result.loaded_buffers, {
        name = vim.api.nvim_buf_get_name(b),
        modified = vim.api.nvim_buf_get_option(b, 'modified'),
        lines = vim.api.nvim_buf_get_lines(b, 0, -1, false),
      })
    end
  end
end

--- Runs the scenario body, writes the result file and quits.
function T.run(body)
  local ok, err = xpcall(body, debug.traceback)
  if not ok then
    T.result.error = tostring(err)
  end
  T.result.status_line = require('coder').status()
  T.result.transcript = require('coder').transcript.lines()
  write_result()
  vim.cmd('qa!')
end

return T
