-- Which version of the editor contract the plugin and the server speak (contract
-- section 24, docs/protocol.md "Versions"). The plugin sends its own as
-- initializationOptions.protocolVersion; the server answers
-- capabilities.experimental.coder.protocolVersion (none: a server older than the
-- announcement, taken as 1.0). Another MAJOR is said once, naming both and what to
-- update; the server's own copy of that warning (MISMATCH_PREFIX) is dropped.
local M = {}

M.PROTOCOL_VERSION = '1.0'
M.MISMATCH_PREFIX = 'coder-ls protocol mismatch:'
M.UNANNOUNCED = '1.0'

function M.major(v)
  if type(v) ~= 'string' then
    return nil
  end
  local maj = v:match('^%s*(%d+)%.%d+%s*$')
  return maj and tonumber(maj) or nil
end

--- The protocol version a server announced in its capabilities (or UNANNOUNCED).
function M.server_protocol(caps)
  local exp = type(caps) == 'table' and caps.experimental or nil
  local coder = type(exp) == 'table' and exp.coder or nil
  local v = type(coder) == 'table' and coder.protocolVersion or nil
  return M.major(v) and vim.trim(v) or M.UNANNOUNCED
end

--- The message when `server` (a protocol version) differs in MAJOR from ours, else nil.
function M.mismatch(server, command, server_version)
  local theirs, ours = M.major(server), M.major(M.PROTOCOL_VERSION)
  if not theirs or not ours or theirs == ours then
    return nil
  end
  local who = 'coder-ls' .. (server_version and (' ' .. server_version) or '') .. ' (' .. tostring(command) .. ')'
  local both = who .. ' speaks protocol ' .. server .. ' and the coder plugin speaks ' .. M.PROTOCOL_VERSION
  if theirs < ours then
    return both
      .. ': update coder-ls (`pipx upgrade coder-ls`, `uv tool upgrade coder-ls`, or `:Lazy build coder_ls`)'
      .. ', or set `cmd` to a newer one'
  end
  return both .. ': update the coder plugin (`:Lazy update coder_ls`), or set `cmd` to a coder-ls for protocol ' .. ours .. '.x'
end

function M.is_server_mismatch(message)
  return type(message) == 'string' and message:sub(1, #M.MISMATCH_PREFIX) == M.MISMATCH_PREFIX
end

return M
