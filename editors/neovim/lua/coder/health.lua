-- :checkhealth coder — is everything there for the plugin to work (contract section 24)?
-- The server (found, its version and the contract's, compared with the plugin's), the
-- model provider and its key (or the offline `scripted` provider), the sandbox backend
-- of the agent's shell, and this client (Neovim, the capabilities it advertises, the
-- running server of this workspace). What the server would decide comes from
-- `coder-ls doctor --json` (the plugin's `settings` passed along), run in the workspace.
local M = {}

local h = vim.health or require('health')
local start = h.start or h.report_start
local ok = h.ok or h.report_ok
local warn = h.warn or h.report_warn
local fail = h.error or h.report_error
local info = h.info or h.report_info

local DOCS = 'see docs/neovim.md, "Install"'

local function run(cmd, args)
  local argv = vim.list_extend(vim.deepcopy(cmd), args)
  local out = vim.fn.system(argv)
  return out, vim.v.shell_error
end

local function check_server(coder, version)
  start('coder: server')
  local cmd = coder.config.cmd
  local exe = vim.fn.exepath(cmd[1])
  if exe == '' then
    fail('`' .. cmd[1] .. '` is not found (cmd = ' .. vim.inspect(cmd) .. ')', {
      'install it: `pipx install coder-ls` or `uv tool install coder-ls` (the lazy.nvim spec\'s `build` does it)',
      'or set `cmd` in require("coder").setup() to the server\'s absolute path; ' .. DOCS,
    })
    return false
  end
  ok('found: ' .. exe)
  local out, code = run(cmd, { '--version' })
  local pkg, proto = out:match('coder%-ls (%S+) %(protocol (%d+%.%d+)%)')
  if code ~= 0 or not pkg then
    fail('`' .. table.concat(cmd, ' ') .. ' --version` said ' .. vim.inspect(vim.trim(out)) .. ': not coder-ls, or one older than protocol versions', {
      'update coder-ls: `pipx upgrade coder-ls`, `uv tool upgrade coder-ls` or `:Lazy build coder_ls`',
    })
    return false
  end
  local mismatch = version.mismatch(proto, exe, pkg)
  if mismatch then
    fail(mismatch)
  else
    ok(('coder-ls %s, protocol %s (the plugin speaks %s)'):format(pkg, proto, version.PROTOCOL_VERSION))
  end
  return true
end

local function check_doctor(coder, root)
  local settings = coder.config.settings or {}
  local encoded = vim.fn.json_encode(vim.tbl_isempty(settings) and vim.empty_dict() or settings)
  local out, code = run(coder.config.cmd, { 'doctor', '--json', '--workspace', root, '--settings', encoded })
  local okj, d = pcall(vim.fn.json_decode, out)
  start('coder: model provider')
  if code ~= 0 or not okj or type(d) ~= 'table' then
    fail('`coder-ls doctor` failed: ' .. vim.trim(out), { 'update coder-ls (doctor came with protocol 1.0)' })
    return
  end
  local p = d.provider or {}
  if p.ok then
    ok(('%s: %s'):format(p.name, p.message))
  else
    fail(('%s: %s'):format(tostring(p.name), tostring(p.message)), {
      'set ANTHROPIC_API_KEY in the environment Neovim starts coder-ls in',
      'or, offline: settings = { provider = "scripted" } with a script of turns (docs/configuration.md)',
    })
  end
  for _, problem in ipairs(d.problems or {}) do
    warn('configuration: ' .. problem)
  end
  start('coder: sandbox')
  local sb = d.sandbox or {}
  if sb.backend and sb.backend ~= 'none' then
    ok(('backend %s (mode %s)'):format(sb.backend, tostring(sb.mode)))
  else
    warn('no sandbox backend: the agent\'s shell commands run unconfined', {
      'install bubblewrap (`apt-get install bubblewrap`), or run on a kernel with Landlock (Linux 5.13+)',
    })
  end
end

local function check_client(coder, root)
  start('coder: client')
  local v = vim.version and vim.version() or nil
  ok(v and ('Neovim %d.%d.%d'):format(v.major, v.minor, v.patch) or 'Neovim')
  local caps = coder.client_capabilities()
  local has = {}
  if caps.window and caps.window.workDoneProgress then
    table.insert(has, 'window.workDoneProgress (progress, cancel)')
  end
  if caps.workspace and caps.workspace.applyEdit then
    table.insert(has, 'workspace.applyEdit (edits land in buffers)')
  end
  if caps.experimental and caps.experimental.coderAskUser then
    table.insert(has, 'experimental.coderAskUser (the agent\'s questions)')
  end
  if #has == 3 then
    ok('capabilities: ' .. table.concat(has, ', '))
  else
    warn('capabilities: only ' .. table.concat(has, ', '), { 'do not remove these in setup({ capabilities = ... })' })
  end
  local client = coder.client_for_root(root)
  if client then
    local s = coder.server_info(client.id) or {}
    if s.mismatch then
      fail(s.mismatch)
    else
      ok(('running for %s: %s %s, protocol %s'):format(root, tostring(s.name), tostring(s.version), tostring(s.protocol)))
    end
  else
    info('no coder client runs for ' .. root .. ' yet (it starts with the first file opened there)')
  end
end

function M.check()
  local coder = require('coder')
  local version = require('coder.version')
  local root = coder.workspace_root()
  if check_server(coder, version) then
    check_doctor(coder, root)
  end
  check_client(coder, root)
end

return M
