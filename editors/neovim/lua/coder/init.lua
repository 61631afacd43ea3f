-- coder_ls for Neovim: a client for the coder language server (a coding agent
-- served over LSP). Works on Neovim 0.7.2 and later.
--
--   require('coder').setup({ cmd = { 'coder-ls' } })
--
-- See docs/neovim.md.
local util = require('coder.util')
local transcript = require('coder.transcript')
local task = require('coder.task')
local progress = require('coder.progress')
local approval = require('coder.approval')
local ask = require('coder.ask')
local focus = require('coder.focus')
local eyes = require('coder.eyes')
local plan = require('coder.plan')
local version = require('coder.version')

local M = {}

M.transcript = transcript

local defaults = {
  cmd = { 'coder-ls' },
  cmd_env = nil,
  root_markers = { '.git', '.coder' },
  settings = {}, -- sent as initializationOptions (and as the `coder` section)
  autostart = true, -- attach to file buffers under a marked root
  filetypes = nil, -- nil: every filetype; else a list to restrict the autostart
  open_transcript = true, -- :Coder / :CoderShell show the transcript window
  transcript_split = 'botright split',
  capabilities = nil, -- merged into make_client_capabilities()
  on_attach = nil, -- function(client, bufnr)
  codelens = true, -- show who wrote the agent's lines (vim.lsp.codelens), refreshed after each turn
  approval_timeout_ms = 10 * 60 * 1000, -- Neovim < 0.10 with an async vim.ui.select
  interrupt_fallback_ms = 3000, -- progress cancel not honoured: send coder.interrupt
  save_edited_files = true, -- :write a buffer after the agent's edit to it (shell/tests see it)
  name = 'coder_ls',
}

M.config = vim.deepcopy(defaults)

-- [client_id] = { root, ready, queue = {fn}, pending = {[key] = on_done},
--                 inflight, session_id, commands }
local clients = {}
local by_root = {}
local buf_client = {}
local last_client = nil
local event_listeners = {}
local counter = 0
local did_setup = false

local function state(id)
  local st = clients[id]
  if not st then
    st = { ready = false, queue = {}, pending = {}, inflight = 0 }
    clients[id] = st
  end
  return st
end

--- A result in the shape of the contract, for failures the server never saw.
local function synth_error(code, message, status)
  return {
    sessionId = '',
    submissionId = '',
    mode = 'error',
    status = status or 'failed',
    reply = message,
    command = nil,
    rawOutput = nil,
    exitCode = nil,
    data = nil,
    error = { code = code, message = message },
  }
end
M._synth_error = synth_error

local function rpc_error_result(err)
  local code = type(err) == 'table' and err.code or nil
  local message = type(err) == 'table' and err.message or tostring(err)
  local res = synth_error('rpc_error', tostring(message), code == -32800 and 'cancelled' or 'failed')
  res.error.rpcCode = code
  return res
end

---------------------------------------------------------------------------
-- Events
---------------------------------------------------------------------------

--- fn(event, client_id) is called for every `coder/event` notification.
--- Returns a function that unsubscribes.
function M.on_event(fn)
  table.insert(event_listeners, fn)
  return function()
    for i, f in ipairs(event_listeners) do
      if f == fn then
        table.remove(event_listeners, i)
        return
      end
    end
  end
end

--- True when the file on disk holds exactly what :write would put there.
local function disk_matches(bufnr, fname)
  if vim.fn.filereadable(fname) ~= 1 then
    return false
  end
  local ok, disk = pcall(vim.fn.readfile, fname, 'b')
  if not ok then
    return false
  end
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local opt = function(name)
    return vim.api.nvim_buf_get_option(bufnr, name)
  end
  if opt('bomb') then
    return false
  end
  local cr = opt('fileformat') == 'dos' and '\r' or ''
  local eol = opt('eol') or (opt('fixeol') and not opt('binary'))
  local n = #lines
  if #disk ~= n + (eol and 1 or 0) or (eol and disk[#disk] ~= '') then
    return false
  end
  for i = 1, n do
    local want = lines[i] .. ((i < n or eol) and cr or '')
    if disk[i] ~= want then
      return false
    end
  end
  return true
end

--- Writes the loaded, modified buffer of `uri` after the agent's edit landed in
--- it (`workspace/applyEdit` changes the buffer, not the file), so the agent's
--- shell and tests see the edit. Returns true when the buffer is saved after it.
--- With `on_disk` (the event said `onDisk: true`: the server wrote the file
--- itself) the buffer is never written, only re-read when the disk holds its text.
function M.save_edited(uri, on_disk)
  if type(uri) ~= 'string' or uri == '' then
    return false
  end
  local ok, fname = pcall(vim.uri_to_fname, uri)
  -- only buffers that exist already: never create one for a URI
  if not ok or vim.fn.bufexists(fname) ~= 1 then
    return false
  end
  local bufnr = vim.uri_to_bufnr(uri)
  if not vim.api.nvim_buf_is_loaded(bufnr) or not vim.api.nvim_buf_get_option(bufnr, 'modified') then
    return false
  end
  if vim.api.nvim_buf_get_option(bufnr, 'buftype') ~= '' then
    return false
  end
  -- The server itself writes a file it did not see open (Neovim loads it to apply
  -- the edit): the disk then already holds the buffer's text but is newer than
  -- the buffer, and :write (even :write!) would ask "changed since reading it".
  -- Re-reading it instead clears 'modified' and keeps the undo history.
  local cmd = disk_matches(bufnr, fname) and 'silent edit!' or 'silent write'
  if on_disk and cmd ~= 'silent edit!' then
    return false -- the server is the file's one writer: a :write here would race it
  end
  local wrote, err = pcall(vim.api.nvim_buf_call, bufnr, function()
    vim.cmd(cmd)
  end)
  if not wrote then
    vim.notify('coder: could not save ' .. fname .. ': ' .. tostring(err), vim.log.levels.WARN)
    return false
  end
  return not vim.api.nvim_buf_get_option(bufnr, 'modified')
end

local function save_edited_later(uri, on_disk)
  if vim.in_fast_event() then
    vim.schedule(function()
      M.save_edited(uri, on_disk)
    end)
  else
    M.save_edited(uri, on_disk)
  end
end

--- Reloads the unmodified file buffers whose file changed on disk: the server
--- and the session's shell write files behind Neovim's back (`/undo`, `!cmd`,
--- the agent's shell), and without this the buffers stay stale until the user
--- runs :checktime. 'autoread' is forced on for the call so that it never asks;
--- modified buffers are left alone (Neovim warns about them on its own).
function M.reload_buffers()
  local saved = vim.o.autoread
  vim.o.autoread = true
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.api.nvim_buf_get_option(b, 'buftype') == ''
      and vim.api.nvim_buf_get_name(b) ~= '' and not vim.api.nvim_buf_get_option(b, 'modified') then
      pcall(vim.cmd, 'silent! checktime ' .. b)
    end
  end
  vim.o.autoread = saved
end

local reload_queued = false
local function reload_buffers_later()
  if reload_queued then
    return
  end
  reload_queued = true
  vim.schedule(function()
    reload_queued = false
    M.reload_buffers()
  end)
end

local function handle_event(client_id, ev)
  if type(ev) ~= 'table' then
    return
  end
  local st = state(client_id)
  if ev.sessionId and ev.sessionId ~= '' then
    st.session_id = ev.sessionId
  end
  if ev.type == 'commandsChanged' then
    st.commands = nil
  elseif ev.type == 'contextUsage' and ev.agentId == nil then
    st.context = { used = ev.usedTokens, limit = ev.limitTokens }
  elseif ev.type == 'sessionChanged' then
    st.context = nil -- a new, cleared or resumed session: unknown until the server says
  elseif ev.type == 'modelChanged' then
    st.model = ev.model
  elseif ev.type == 'taskUpdated' then
    progress.task_update(client_id, ev)
    task.remember(ev.taskId)
  elseif ev.type == 'planProposed' then
    plan.on_event(client_id, ev)
  end
  local ok, err = pcall(transcript.on_event, ev, st.root)
  if not ok then
    vim.notify('coder: transcript: ' .. tostring(err), vim.log.levels.DEBUG)
  end
  if ev.type == 'editApplied' and ev.applied == true and M.config.save_edited_files then
    save_edited_later(ev.uri, ev.onDisk == true)
  elseif ev.type == 'turnFinished' or ev.type == 'shellFinished' then
    if ev.type == 'turnFinished' then
      progress.finish_submission(client_id, ev.submissionId)
      approval.turn_finished(client_id)
      plan.offer(M.execute, client_id) -- a plan came with this turn: Approve / Revise / Reject
      if M.config.codelens then -- the lines the agent wrote (or a revert) moved the lenses
        vim.schedule(function()
          require('coder.lenses').refresh_client(client_id)
        end)
      end
    end
    reload_buffers_later()
  end
  for _, fn in ipairs(event_listeners) do
    pcall(fn, ev, client_id)
  end
end

---------------------------------------------------------------------------
-- Clients
---------------------------------------------------------------------------

local function get_client(id)
  local client = id and vim.lsp.get_client_by_id(id)
  if client and not util.is_stopped(client) then
    return client
  end
  return nil
end

local function is_file_buffer(bufnr)
  if not bufnr or not vim.api.nvim_buf_is_valid(bufnr) then
    return false
  end
  if vim.api.nvim_buf_get_option(bufnr, 'buftype') ~= '' then
    return false
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return false
  end
  return true
end

--- The workspace root of a buffer (nil for non-file buffers or no marker).
function M.root_of(bufnr)
  if not is_file_buffer(bufnr) then
    return nil
  end
  return util.find_root(vim.api.nvim_buf_get_name(bufnr), M.config.root_markers)
end

local function on_progress_params(client_id, params)
  if clients[client_id] then
    progress.update(client_id, util.denull(params))
  end
end

local function fail_pending(id, message)
  local st = clients[id]
  if not st then
    return
  end
  local queue, pending = st.queue, st.pending
  st.queue, st.pending = {}, {}
  for _, fn in ipairs(queue) do
    pcall(fn, nil, message)
  end
  for _, on_done in pairs(pending) do
    pcall(on_done, synth_error('server_exited', message))
  end
end

--- The document URIs a WorkspaceEdit changes.
--- True when the buffer of `uri` exists, is loaded and attached to the client
--- (the server saw it opened).
local function is_attached(uri, client_id)
  local ok, fname = pcall(vim.uri_to_fname, uri)
  if not ok or vim.fn.bufexists(fname) ~= 1 then
    return false
  end
  local bufnr = vim.uri_to_bufnr(uri) -- exists already: no buffer is created
  return vim.api.nvim_buf_is_loaded(bufnr) and vim.lsp.buf_is_attached(bufnr, client_id)
end

local function edited_uris(edit)
  local uris = {}
  if type(edit) ~= 'table' then
    return uris
  end
  for uri in pairs(type(edit.changes) == 'table' and edit.changes or {}) do
    table.insert(uris, uri)
  end
  for _, change in ipairs(type(edit.documentChanges) == 'table' and edit.documentChanges or {}) do
    if type(change) == 'table' and type(change.textDocument) == 'table' then
      table.insert(uris, change.textDocument.uri)
    end
  end
  return uris
end

--- The text of `uri` now: its buffer's if loaded, else the file's ('' when absent).
local function text_of(uri)
  local bufnr = vim.uri_to_bufnr(uri)
  if vim.api.nvim_buf_is_loaded(bufnr) then
    return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n') .. '\n'
  end
  local path = vim.uri_to_fname(uri)
  if vim.fn.filereadable(path) == 1 then
    return table.concat(vim.fn.readfile(path), '\n') .. '\n'
  end
  return ''
end

--- Lines added and removed between two texts (vim.diff's hunks).
local function diff_counts(before, after)
  local ok, hunks = pcall(vim.diff, before, after, { result_type = 'indices' })
  local added, removed = 0, 0
  for _, h in ipairs(ok and type(hunks) == 'table' and hunks or {}) do
    removed, added = removed + h[2], added + h[4]
  end
  return added, removed
end

local function make_handlers()
  local handlers = {
    ['coder/event'] = function(_, params, ctx)
      handle_event(ctx.client_id, util.denull(params))
    end,
    ['window/showMessageRequest'] = approval.handler,
    ['window/showMessage'] = function(err, params, ctx, config)
      -- the plugin says a protocol mismatch itself (on_init), naming what to update
      if params and version.is_server_mismatch(params.message) then
        return
      end
      return vim.lsp.handlers['window/showMessage'](err, params, ctx, config)
    end,
    ['coder/askUser'] = ask.handler, -- the model's ask_user questions (vim.ui.select)
    ['coder/notify'] = focus.handler, -- a turn ended or waits while Neovim was not focused (focus.lua)
    -- the editor as the agent's eyes (eyes.lua): diagnostics and the other language servers' answers
    ['coder/diagnostics'] = eyes.diagnostics,
    ['coder/languageQuery'] = eyes.language_query,
    ['workspace/applyEdit'] = function(err, params, ctx, config)
      -- A file the server did not see open (no buffer attached to this client)
      -- is written by the server itself after this answer (its editApplied says
      -- onDisk): Neovim loads it only to apply the edit, and must not :write it.
      local uris = edited_uris(params and params.edit)
      local attached, before = {}, {}
      for _, uri in ipairs(uris) do
        attached[uri] = is_attached(uri, ctx.client_id)
        before[uri] = text_of(uri)
      end
      local res = vim.lsp.handlers['workspace/applyEdit'](err, params, ctx, config)
      -- what each file gained and lost: the transcript's line of the edit says it
      if type(res) == 'table' and res.applied then
        for _, uri in ipairs(uris) do
          local added, removed = diff_counts(before[uri], text_of(uri))
          pcall(transcript.note_diff, uri, added, removed)
        end
      end
      -- Save before answering: the server snapshots the workspace for /undo
      -- when the turn ends, and a save that lands after that (the editApplied
      -- event arrives later, and 0.11 runs it later still) left /undo with
      -- "Nothing to undo" and the agent's shell with the old file.
      if M.config.save_edited_files and type(res) == 'table' and res.applied then
        for _, uri in ipairs(uris) do
          if attached[uri] then
            M.save_edited(uri)
          end
        end
      end
      return res
    end,
  }
  if not util.has('nvim-0.10') then
    -- 0.10+ reports progress through the LspProgress autocmd instead.
    handlers['$/progress'] = function(err, result, ctx, config)
      on_progress_params(ctx.client_id, result)
      local default = vim.lsp.handlers['$/progress']
      if default then
        return default(err, result, ctx, config)
      end
    end
  end
  return handlers
end

local function make_capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.window = caps.window or {}
  caps.window.workDoneProgress = true
  -- we answer coder/askUser (ask.lua): the server sends the questions all at once;
  -- we show coder/notify (focus.lua) instead of a window/showMessage
  -- we answer coder/diagnostics and coder/languageQuery (eyes.lua)
  caps.experimental = vim.tbl_extend('force', caps.experimental or {}, {
    coderAskUser = true,
    coderNotify = true,
    coderDiagnostics = true,
    coderLanguageQuery = true,
  })
  if M.config.capabilities then
    caps = vim.tbl_deep_extend('force', caps, M.config.capabilities)
  end
  return caps
end

local function check_version(client, result)
  local caps = (type(result) == 'table' and result.capabilities) or client.server_capabilities
  local info = type(result) == 'table' and result.serverInfo or nil
  local st = state(client.id)
  st.server = {
    name = info and info.name or nil,
    version = info and info.version or nil,
    protocol = version.server_protocol(caps),
  }
  local cmd = client.config and client.config.cmd
  local message = version.mismatch(st.server.protocol, type(cmd) == 'table' and cmd[1] or cmd, st.server.version)
  st.server.mismatch = message
  if message then
    vim.schedule(function()
      vim.notify('coder: ' .. message, vim.log.levels.WARN)
    end)
  end
end

--- What the server of a client said about itself at initialize: {name, version, protocol, mismatch}.
function M.server_info(client_id)
  local st = clients[client_id]
  return st and st.server or nil
end

local function on_init(client, result)
  local st = state(client.id)
  check_version(client, result)
  st.ready = true
  st.root = st.root or (client.config and client.config.root_dir)
  if st.root then
    by_root[st.root] = client.id
  end
  client.commands = client.commands or {}
  -- Code actions' commands go through M.execute: progress token, result shown.
  client.commands['coder.codeAction'] = function(command)
    local args = command.arguments and command.arguments[1] or {}
    M.execute(command.command, args, nil, { client_id = client.id })
  end
  local queue = st.queue
  st.queue = {}
  for _, fn in ipairs(queue) do
    local ok, err = pcall(fn, client)
    if not ok then
      vim.notify('coder: ' .. tostring(err), vim.log.levels.ERROR)
    end
  end
  -- Warm the slash-command cache for completion.
  M.list_commands(function() end, { client_id = client.id })
end

local function on_exit(code, signal, client_id)
  vim.schedule(function()
    local st = clients[client_id]
    if st and st.root and by_root[st.root] == client_id then
      by_root[st.root] = nil
    end
    fail_pending(client_id, string.format('coder-ls exited (code %s, signal %s)', tostring(code), tostring(signal)))
    clients[client_id] = nil
    progress.forget(client_id)
    if last_client == client_id then
      last_client = nil
    end
  end)
end

--- The client configuration for a root (the shape vim.lsp.start takes).
function M.client_config(root)
  local settings = M.config.settings or {}
  local has_settings = not util.is_empty(settings)
  return {
    name = M.config.name,
    cmd = M.config.cmd,
    cmd_env = M.config.cmd_env,
    cmd_cwd = root,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    -- the settings, and the contract the plugin speaks (lua/coder/version.lua)
    init_options = vim.tbl_extend('force', has_settings and settings or {}, { protocolVersion = version.PROTOCOL_VERSION }),
    settings = has_settings and { coder = settings } or nil,
    capabilities = make_capabilities(),
    handlers = make_handlers(),
    on_init = on_init,
    on_exit = on_exit,
    on_attach = function(client, bufnr)
      if M.config.codelens then
        require('coder.lenses').attach(bufnr)
      end
      if M.config.on_attach then
        M.config.on_attach(client, bufnr)
      end
    end,
  }
end

--- A running coder client for `root` (one started by us or by vim.lsp.enable).
local function find_client(root)
  local id = by_root[root]
  if get_client(id) then
    return id
  end
  by_root[root] = nil
  for _, client in ipairs(util.get_clients()) do
    if client.name == M.config.name and client.config and client.config.root_dir == root
      and not util.is_stopped(client) then
      by_root[root] = client.id
      local st = state(client.id)
      st.root = root
      if client.initialized and not st.ready then
        st.ready = true
      end
      return client.id
    end
  end
  return nil
end

--- Starts (or reuses) the client of `root`; attaches `bufnr` when given.
--- Returns the client id or nil and an error message.
function M.start(root, bufnr)
  local id = find_client(root)
  if id then
    if bufnr and not vim.lsp.buf_is_attached(bufnr, id) then
      vim.lsp.buf_attach_client(bufnr, id)
    end
    return id
  end
  local config = M.client_config(root)
  -- `nvim FILE` runs setup() (and this) before FILE is loaded, and Neovim 0.10+
  -- refuses to attach an unloaded buffer: vim.lsp.start then starts the server
  -- but returns nil, and the BufEnter that follows started a second one. So
  -- attach only a loaded buffer (the autocmds attach the others once loaded),
  -- and let vim.lsp.start reuse a coder client of the same root (one started by
  -- vim.lsp.enable included).
  local attach_now = bufnr ~= nil and vim.api.nvim_buf_is_loaded(bufnr)
  local function same_root(client, conf)
    return client.name == conf.name and client.config ~= nil and client.config.root_dir == conf.root_dir
      and not util.is_stopped(client)
  end
  local ok, res = pcall(function()
    if util.has('nvim-0.11') then
      return vim.lsp.start(config, {
        bufnr = attach_now and bufnr or nil,
        attach = attach_now,
        reuse_client = same_root,
      })
    elseif util.has('nvim-0.10') and attach_now then
      return vim.lsp.start(config, { bufnr = bufnr, reuse_client = same_root })
    end
    local new_id = vim.lsp.start_client(config)
    if new_id and attach_now then
      vim.lsp.buf_attach_client(bufnr, new_id)
    end
    return new_id
  end)
  if ok and not res then
    -- started (or found) but not attached: it is ours all the same
    res = find_client(root)
  end
  if not ok or not res then
    return nil, 'could not start ' .. table.concat(M.config.cmd, ' ') .. (ok and '' or (': ' .. tostring(res)))
  end
  local st = state(res)
  st.root = root
  by_root[root] = res
  return res
end

--- Attaches a file buffer to the client of its root (starting it if needed).
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not is_file_buffer(bufnr) then
    return nil
  end
  local fts = M.config.filetypes
  if fts and not vim.tbl_contains(fts, vim.api.nvim_buf_get_option(bufnr, 'filetype')) then
    return nil
  end
  local root = M.root_of(bufnr)
  if not root then
    return nil
  end
  local id = M.start(root, bufnr)
  if id then
    buf_client[bufnr] = id
  end
  return id
end

--- The root a command issued from `bufnr` is about: the buffer's root, else
--- the root around the cwd, else the cwd.
local function command_root(bufnr)
  local root = M.root_of(bufnr)
  if root then
    return root
  end
  local cwd = vim.fn.getcwd()
  return util.find_root(cwd, M.config.root_markers) or cwd
end

--- Calls fn(client) once the client for `opts` is initialized, or fn(nil, err).
--- opts: { bufnr?, client_id? }
function M.with_client(opts, fn)
  opts = opts or {}
  local id = opts.client_id
  if not id or not clients[id] then
    local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
    id = buf_client[bufnr]
    if not get_client(id) then
      local root = command_root(bufnr)
      local err
      id, err = M.start(root, is_file_buffer(bufnr) and bufnr or nil)
      if not id then
        return fn(nil, err)
      end
      if is_file_buffer(bufnr) then
        buf_client[bufnr] = id
      end
    end
  end
  last_client = id
  local st = state(id)
  local client = get_client(id)
  if st.ready and client then
    return fn(client)
  end
  if not client and st.ready then
    return fn(nil, 'coder-ls is not running')
  end
  table.insert(st.queue, fn)
end

--- The capabilities the plugin advertises (for :checkhealth coder).
function M.client_capabilities()
  return make_capabilities()
end

--- The workspace root of a buffer (default the current one), else the cwd.
function M.workspace_root(bufnr)
  return command_root(bufnr or vim.api.nvim_get_current_buf())
end

--- The running coder client of a root, if any.
function M.client_for_root(root)
  return get_client(find_client(root))
end

--- The client object used for commands from the current buffer (no start).
function M.get_client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local id = buf_client[bufnr]
  if get_client(id) then
    return get_client(id)
  end
  local root = command_root(bufnr)
  id = find_client(root)
  if id then
    return get_client(id)
  end
  return get_client(last_client)
end

---------------------------------------------------------------------------
-- Commands (workspace/executeCommand)
---------------------------------------------------------------------------

local function remember(client_id, res)
  local st = clients[client_id]
  if st and type(res) == 'table' and res.sessionId and res.sessionId ~= '' then
    st.session_id = res.sessionId
  end
end

--- Runs `workspace/executeCommand` {command, arguments = {args}} and calls
--- on_done(result) with the command result of the contract; an LSP error (or
--- a dead server) gives a synthesized result with mode "error".
--- opts: { bufnr?, client_id?, progress? (default true: send a workDoneToken) }
function M.execute(command, args, on_done, opts)
  opts = opts or {}
  on_done = on_done or M.report
  M.with_client(opts, function(client, err)
    if not client then
      return on_done(synth_error('no_client', err or 'coder-ls is not running'))
    end
    local st = state(client.id)
    counter = counter + 1
    local key = 'coder.nvim/' .. counter
    local params = { command = command, arguments = { util.object(args) } }
    if opts.progress ~= false then
      params.workDoneToken = key
    end
    local done = false
    local function finish(res)
      if done then
        return
      end
      done = true
      st.pending[key] = nil
      if opts.progress ~= false then
        st.inflight = math.max(0, st.inflight - 1)
      end
      if opts.progress ~= false then
        -- the server may have skipped `end` on our token
        progress.update(client.id, { token = key, value = { kind = 'end' } })
      else
        progress.touch()
      end
      remember(client.id, res)
      if type(res) == 'table' then
        progress.finish_task_submission(client.id, res.submissionId)
      end
      if opts.progress ~= false then
        reload_buffers_later() -- /undo, !cmd: files may have changed on disk
      end
      on_done(res)
    end
    st.pending[key] = finish
    if opts.progress ~= false then
      st.inflight = st.inflight + 1
    end
    progress.touch()
    local ok, sent = pcall(util.request, client, 'workspace/executeCommand', params, function(rpc_err, result)
      if rpc_err then
        return finish(rpc_error_result(rpc_err))
      end
      result = util.denull(result)
      if type(result) ~= 'table' then
        return finish(synth_error('bad_result', 'the server answered ' .. command .. ' without a result'))
      end
      finish(result)
    end, opts.bufnr)
    if not ok or not sent then
      finish(synth_error('request_failed', 'could not send ' .. command .. (ok and '' or (': ' .. tostring(sent)))))
    end
  end)
end

--- Shows a result: in the transcript, and errors as notifications.
function M.report(res)
  if type(res) ~= 'table' then
    return
  end
  pcall(transcript.on_result, res)
  pcall(require('coder.diffview').show, res) -- `/diff turn`: a diff buffer
  if res.mode == 'error' then
    local msg = (res.error and res.error.message) or res.reply or 'failed'
    vim.notify('coder: ' .. tostring(msg), vim.log.levels.ERROR)
  elseif res.status == 'cancelled' then
    vim.notify('coder: cancelled', vim.log.levels.WARN)
  end
end

--- What a user types: `/cmd args`, `!shell` or a prompt.
--- opts: { session_id?, context? = {uri, range?}, bufnr?, origin?, replaces? }
--- `replaces` (edit and resend, contract section 22): a submissionId; the text runs in a
--- new session forked before it (`:CoderResend` picks one).
--- `origin` (contract section 18): leave it out for what the user typed; another plugin or
--- automation calling this passes 'client', a link it rendered 'link' (the server then
--- refuses shell lines, /trust, /permissions and file commands).
function M.input(text, opts, on_done)
  if type(opts) == 'function' then
    opts, on_done = nil, opts
  end
  opts = opts or {}
  local args = { text = text }
  if opts.session_id then
    args.sessionId = opts.session_id
  end
  if opts.context then
    args.context = opts.context
  end
  if opts.origin then
    args.origin = opts.origin
  end
  if opts.replaces then
    args.replaces = opts.replaces
  end
  M.execute('coder.input', args, on_done, opts)
end

--- Runs `command` in the session's shell (`coder.shell`).
function M.shell(command, opts, on_done)
  if type(opts) == 'function' then
    opts, on_done = nil, opts
  end
  opts = opts or {}
  local args = { command = command }
  if opts.session_id then
    args.sessionId = opts.session_id
  end
  if opts.origin then
    args.origin = opts.origin
  end
  M.execute('coder.shell', args, on_done, opts)
end

--- A built-in slash command by id: M.slash('model', 'opus', opts, on_done)
--- runs `coder.model {args = "opus"}`.
function M.slash(name, args, opts, on_done)
  if type(opts) == 'function' then
    opts, on_done = nil, opts
  end
  opts = opts or {}
  local a = {}
  if args ~= nil and args ~= '' then
    a.args = args
  end
  if opts.session_id then
    a.sessionId = opts.session_id
  end
  if opts.origin then
    a.origin = opts.origin
  end
  M.execute('coder.' .. name, a, on_done, opts)
end

--- The slash-command catalog ({name, description, argumentHint, kind, source}),
--- cached per client until a `commandsChanged` event.
function M.list_commands(cb, opts)
  opts = vim.tbl_extend('force', opts or {}, { progress = false })
  M.with_client(opts, function(client)
    local st = client and clients[client.id]
    if st and st.commands then
      return cb(st.commands)
    end
    if not client then
      return cb({})
    end
    M.execute('coder.listCommands', {}, function(res)
      local cmds = res and res.data and res.data.commands
      if type(cmds) == 'table' then
        st.commands = cmds
      end
      cb(cmds or {})
    end, vim.tbl_extend('force', opts, { client_id = client.id }))
  end)
end

--- Cancels what runs in the session: `window/workDoneProgress/cancel` on the
--- running progress tokens; `coder.interrupt` when there is none (or when the
--- tokens have not ended after `interrupt_fallback_ms`).
function M.interrupt(opts, on_done)
  if type(opts) == 'function' then
    opts, on_done = nil, opts
  end
  opts = opts or {}
  local client = opts.client_id and get_client(opts.client_id) or M.get_client(opts.bufnr)
  if not client then
    local res = synth_error('no_client', 'coder-ls is not running')
    if on_done then
      on_done(res)
    else
      vim.notify('coder: nothing to interrupt', vim.log.levels.INFO)
    end
    return
  end
  local args = {}
  if opts.session_id then
    args.sessionId = opts.session_id
  end
  local tokens = progress.tokens(client.id)
  if #tokens == 0 or opts.command then
    return M.execute('coder.interrupt', args, on_done or function(res)
      if res.mode == 'error' then
        M.report(res)
      end
    end, { client_id = client.id, progress = false })
  end
  for _, token in ipairs(tokens) do
    util.notify(client, 'window/workDoneProgress/cancel', { token = token })
  end
  local id = client.id
  vim.defer_fn(function()
    local still = false
    local now = progress.tokens(id)
    for _, a in ipairs(now) do
      for _, b in ipairs(tokens) do
        if a == b then
          still = true
        end
      end
    end
    if still and get_client(id) then
      M.execute('coder.interrupt', args, function() end, { client_id = id, progress = false })
    end
  end, M.config.interrupt_fallback_ms)
  if on_done then
    on_done({
      sessionId = clients[id] and clients[id].session_id or '',
      submissionId = '',
      mode = 'command',
      status = 'completed',
      reply = 'cancel sent',
      data = { kind = 'progressCancel', tokens = tokens },
    })
  end
end

---------------------------------------------------------------------------
-- Statusline
---------------------------------------------------------------------------

--- "coder: off" | "coder: starting" | "coder: idle" |
--- "coder: running (Running: sleep 5)" | "coder: waiting for approval" |
--- "coder: task 25% (3/12 steps)" (a `/task` runs)
function M.status()
  local bufnr = vim.api.nvim_get_current_buf()
  local id = buf_client[bufnr]
  if not (id and clients[id]) then
    id = last_client
  end
  if not (id and clients[id]) then
    id = next(clients)
  end
  if not id then
    return 'coder: off'
  end
  local st = clients[id]
  if not st.ready then
    return 'coder: starting'
  end
  if approval.pending then
    return 'coder: waiting for approval'
  end
  local task = progress.task(id)
  if task then
    if task.status == 'planning' and task.total == 0 then
      return 'coder: task 0% (planning)'
    end
    local failed = task.failed > 0 and (', ' .. task.failed .. ' failed') or ''
    return string.format('coder: task %d%% (%d/%d steps%s)', task.percentage, task.completed, task.total, failed)
  end
  local entry = progress.current(id)
  if entry then
    local msg = entry.message or entry.title
    if msg and msg ~= '' then
      return 'coder: running (' .. msg .. ')'
    end
    return 'coder: running'
  end
  if st.inflight > 0 then
    return 'coder: running'
  end
  return 'coder: idle'
end

--- The share of the context window the session uses (0-100, from the server's
--- `contextUsage` events; `/context` sends one too), or nil before any. For a statusline:
--- `%{v:lua.require'coder'.context()}` shows "ctx 12%" (or nothing).
function M.context_percent(bufnr)
  local client = M.get_client(bufnr)
  local st = client and clients[client.id]
  local c = st and st.context
  if not (c and type(c.used) == 'number' and type(c.limit) == 'number' and c.limit > 0) then
    return nil
  end
  return math.min(100, math.floor(100 * c.used / c.limit + 0.5))
end

function M.context(bufnr)
  local percent = M.context_percent(bufnr)
  return percent and ('ctx ' .. percent .. '%') or ''
end

--- The session id last seen for the current client (nil before any).
function M.session_id(bufnr)
  local client = M.get_client(bufnr)
  return client and clients[client.id] and clients[client.id].session_id or nil
end

---------------------------------------------------------------------------
-- User commands
---------------------------------------------------------------------------

local function utf16_len(line)
  local ok, _, utf16 = pcall(vim.str_utfindex, line)
  if ok and utf16 then
    return utf16
  end
  return #line
end

--- {uri, range} of lines line1..line2 of the current buffer.
local function range_context(line1, line2)
  local bufnr = vim.api.nvim_get_current_buf()
  if not is_file_buffer(bufnr) then
    return nil
  end
  local last = vim.api.nvim_buf_get_lines(bufnr, line2 - 1, line2, false)[1] or ''
  return {
    uri = vim.uri_from_bufnr(bufnr),
    range = {
      start = { line = line1 - 1, character = 0 },
      ['end'] = { line = line2 - 1, character = utf16_len(last) },
    },
  }
end

--- `@path` completion: the server's coder.completeInput (its cached file list).
local function complete_at(arglead)
  local client = M.get_client()
  if not client then
    return {}
  end
  local params = { command = 'coder.completeInput', arguments = { { text = arglead } } }
  local resp
  if util.has('nvim-0.11') then
    resp = client:request_sync('workspace/executeCommand', params, 1000)
  else
    resp = client.request_sync('workspace/executeCommand', params, 1000)
  end
  local res = resp and util.denull(resp.result)
  local out = {}
  for _, item in ipairs((res and res.data and res.data.items) or {}) do
    table.insert(out, item.label)
  end
  return out
end

local function complete_slash(arglead, cmdline, cursorpos)
  if arglead:sub(1, 1) == '@' then
    return complete_at(arglead)
  end
  local before = cmdline:sub(1, cursorpos)
  local typed = before:match('^.-Coder%a*!?%s+(.*)$') or ''
  if typed:find('%s') or (typed ~= '' and typed:sub(1, 1) ~= '/') then
    return {}
  end
  local client = M.get_client()
  if not client then
    return {}
  end
  local st = clients[client.id]
  if st and not st.commands then
    local params = { command = 'coder.listCommands', arguments = { vim.empty_dict() } }
    local resp
    if util.has('nvim-0.11') then
      resp = client:request_sync('workspace/executeCommand', params, 1000)
    else
      resp = client.request_sync('workspace/executeCommand', params, 1000)
    end
    local res = resp and util.denull(resp.result)
    if res and res.data and type(res.data.commands) == 'table' then
      st.commands = res.data.commands
    end
  end
  local out = {}
  for _, c in ipairs((st and st.commands) or {}) do
    local item = '/' .. c.name
    -- a skill for the agent only (user-invocable: false) answers /name with an error
    if c.userInvocable ~= false and item:sub(1, #arglead) == arglead then
      table.insert(out, item)
    end
  end
  table.sort(out)
  return out
end

local function show_transcript()
  if M.config.open_transcript then
    pcall(transcript.open, { split = M.config.transcript_split })
  end
end

local function echo_lines(lines)
  vim.api.nvim_echo({ { table.concat(lines, '\n') } }, true, {})
end

local function session_label(s)
  return string.format('%s %s  %s  %d msgs  %s', s.current and '*' or ' ', tostring(s.id):sub(1, 8),
    tostring(s.updated or s.updatedAt or ''), tonumber(s.messageCount) or 0, tostring(s.title or ''))
end

--- Calls cb(sessions, result) with the session list.
function M.sessions(cb, opts)
  M.execute('coder.sessions', {}, function(res)
    local list = res and res.data and res.data.sessions
    if res.mode == 'error' then
      M.report(res)
    end
    cb(type(list) == 'table' and list or {}, res)
  end, vim.tbl_extend('force', opts or {}, { progress = false }))
end

--- Resumes a session: by id, or chosen with vim.ui.select.
function M.resume(id, on_done)
  on_done = on_done or M.report
  if id and id ~= '' then
    return M.slash('resume', id, nil, on_done)
  end
  M.sessions(function(list)
    if #list == 0 then
      return vim.notify('coder: no sessions to resume', vim.log.levels.INFO)
    end
    vim.ui.select(list, {
      prompt = 'Resume session',
      kind = 'coder.session',
      format_item = session_label,
    }, function(choice)
      if choice then
        M.slash('resume', choice.id, nil, on_done)
      end
    end)
  end)
end

--- Switches the model: by name, or chosen with vim.ui.select.
function M.model(name, on_done)
  on_done = on_done or M.report
  if name and name ~= '' then
    return M.slash('model', name, nil, on_done)
  end
  M.execute('coder.model', {}, function(res)
    local data = res and res.data
    if res.mode == 'error' or type(data) ~= 'table' or type(data.models) ~= 'table' then
      return M.report(res)
    end
    vim.ui.select(data.models, {
      prompt = 'Model (current: ' .. tostring(data.current) .. ')',
      kind = 'coder.model',
      format_item = function(m)
        local s = m.name .. ' (' .. tostring(m.provider) .. ')'
        if m.name == data.current then
          s = s .. ' [current]'
        end
        if m.description and m.description ~= '' then
          s = s .. ' - ' .. m.description
        end
        return s
      end,
    }, function(choice)
      if choice then
        M.slash('model', choice.name, nil, on_done)
      end
    end)
  end, { progress = false })
end

--- `:CoderTask [args]` (see coder/task.lua); on_done(result, lines) replaces the display.
function M.task(args, on_done)
  return task.run(args, on_done)
end

M.task_lines = task.lines
M.task_list_lines = task.list_lines
task.bind({
  input = function(...)
    return M.input(...)
  end,
  report = function(...)
    return M.report(...)
  end,
  echo_lines = echo_lines,
  show_transcript = show_transcript,
  command_root = command_root,
})

local function create_commands()
  local create = vim.api.nvim_create_user_command
  local function input_command(o)
    -- the current buffer goes with the input; from visual mode (a range), its lines
    local ctx = nil
    if o.range and o.range > 0 then
      ctx = range_context(o.line1, o.line2)
    elseif is_file_buffer(vim.api.nvim_get_current_buf()) then
      ctx = { uri = vim.uri_from_bufnr(vim.api.nvim_get_current_buf()) }
    end
    show_transcript()
    M.input(o.args, { context = ctx })
  end
  local input_opts = { nargs = '+', range = true, complete = complete_slash, desc = 'coder: /command, !shell or a prompt' }
  create('Coder', input_command, input_opts)
  create('CoderInput', input_command, input_opts) -- the same, by the name other plugins use
  create('CoderShell', function(o)
    show_transcript()
    M.shell(o.args)
  end, { nargs = '+', complete = 'shellcmd', desc = 'coder: run a command in the session shell' })
  create('CoderResend', function()
    show_transcript()
    require('coder.resend').run(M)
  end, { nargs = 0, desc = 'coder: edit a past message and resend it (a fork of the session before it)' })
  create('CoderInterrupt', function()
    M.interrupt()
  end, { nargs = 0, desc = 'coder: cancel what runs in the session' })
  create('CoderTranscript', function()
    transcript.open({ focus = true, split = M.config.transcript_split })
  end, { nargs = 0, desc = 'coder: show the transcript' })
  create('CoderSessions', function()
    M.sessions(function(list, res)
      if res.mode == 'error' then
        return
      end
      if #list == 0 then
        return echo_lines({ 'coder: no sessions' })
      end
      local lines = { 'coder sessions' .. (res.data.timezone and (' (' .. res.data.timezone .. ')') or '') .. ':' }
      for _, s in ipairs(list) do
        table.insert(lines, session_label(s))
      end
      echo_lines(lines)
    end)
  end, { nargs = 0, desc = 'coder: list sessions' })
  create('CoderResume', function(o)
    M.resume(o.args)
  end, { nargs = '?', desc = 'coder: resume a session' })
  create('CoderModel', function(o)
    M.model(o.args)
  end, { nargs = '?', desc = 'coder: show or switch the model' })
  create('CoderPlan', function(o)
    local client = M.get_client()
    if not client then
      return vim.notify('coder: coder-ls is not running', vim.log.levels.WARN)
    end
    local action, rest = o.args:match('^(%S+)%s*(.-)$')
    if not vim.tbl_contains(plan.ACTIONS, action or '') then
      return vim.notify('coder: :CoderPlan approve [preset] | revise <feedback> | reject', vim.log.levels.WARN)
    end
    plan.answer(M.execute, client.id, action, rest)
  end, { nargs = '+', complete = plan.complete, desc = 'coder: answer the proposed plan' })
  create('CoderTask', function(o)
    M.task(o.args)
  end, { nargs = '*', complete = task.complete, desc = 'coder: /task status|list|resume [id], or a new task' })
end

---------------------------------------------------------------------------
-- Setup
---------------------------------------------------------------------------

function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  if opts and opts.root_markers then
    M.config.root_markers = opts.root_markers -- lists replace, not merge
  end
  if opts and opts.cmd then
    M.config.cmd = opts.cmd
  end
  approval.timeout_ms = M.config.approval_timeout_ms
  eyes.own_name = M.config.name -- never ask coder_ls itself for definitions and symbols
  create_commands()

  local group = vim.api.nvim_create_augroup('coder_ls', { clear = true })
  if M.config.autostart then
    vim.api.nvim_create_autocmd({ 'FileType', 'BufEnter' }, {
      group = group,
      callback = function(args)
        M.attach(args.buf)
      end,
    })
  end
  vim.api.nvim_create_autocmd('BufWipeout', {
    group = group,
    callback = function(args)
      buf_client[args.buf] = nil
    end,
  })
  -- unfocused, the server notifies when a turn ends or waits for you (focus.lua)
  vim.api.nvim_create_autocmd({ 'FocusGained', 'FocusLost' }, {
    group = group,
    callback = function(args)
      local mine = vim.tbl_filter(function(c)
        return c.name == M.config.name
      end, util.get_clients())
      focus.send(mine, args.event == 'FocusGained')
    end,
  })
  if util.has('nvim-0.10') then
    vim.api.nvim_create_autocmd('LspProgress', {
      group = group,
      callback = function(args)
        local data = args.data or {}
        on_progress_params(data.client_id, data.params or data.result)
      end,
    })
  end
  if util.has('nvim-0.11') and not did_setup then
    -- For users of the native API: vim.lsp.enable('coder_ls') starts the same client.
    pcall(vim.lsp.config, M.config.name, {
      cmd = M.config.cmd,
      root_markers = M.config.root_markers,
      init_options = not util.is_empty(M.config.settings) and M.config.settings or nil,
      settings = not util.is_empty(M.config.settings) and { coder = M.config.settings } or nil,
      capabilities = make_capabilities(),
      handlers = make_handlers(),
      on_init = on_init,
      on_exit = on_exit,
    })
  end
  did_setup = true
  if M.config.autostart then
    M.attach(vim.api.nvim_get_current_buf())
  end
  return M
end

return M
