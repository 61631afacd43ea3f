-- Small compatibility helpers: Neovim 0.7.2 is the floor, newer APIs are used
-- when present.
local M = {}

local has_cache = {}

--- vim.fn.has(feature) == 1, cached.
function M.has(feature)
  local v = has_cache[feature]
  if v == nil then
    v = vim.fn.has(feature) == 1
    has_cache[feature] = v
  end
  return v
end

M.uv = vim.uv or vim.loop

--- All running LSP clients (vim.lsp.get_clients on 0.10+).
function M.get_clients()
  if vim.lsp.get_clients then
    return vim.lsp.get_clients()
  end
  return vim.lsp.get_active_clients()
end

function M.is_stopped(client)
  if not client then
    return true
  end
  if M.has('nvim-0.11') then
    return client:is_stopped()
  end
  return client.is_stopped()
end

--- client.request with the calling convention of the running Neovim.
function M.request(client, method, params, handler, bufnr)
  if M.has('nvim-0.11') then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

function M.notify(client, method, params)
  if M.has('nvim-0.11') then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

--- Replaces vim.NIL (JSON null) by nil in maps, recursively. Neovim 0.7 decodes
--- nulls inside objects to nil already; 0.10+ keeps vim.NIL.
function M.denull(value)
  if value == vim.NIL then
    return nil
  end
  if type(value) == 'table' then
    for k, v in pairs(value) do
      if v == vim.NIL then
        value[k] = nil
      elseif type(v) == 'table' then
        M.denull(v)
      end
    end
  end
  return value
end

--- Splits on newlines, keeping empty pieces (a trailing "\n" gives a final "").
function M.lines(text)
  text = tostring(text or ''):gsub('\r\n', '\n'):gsub('\r', '\n')
  return vim.split(text, '\n', { plain = true })
end

function M.is_empty(t)
  return type(t) ~= 'table' or next(t) == nil
end

--- `t` as a JSON object, even when empty (an empty Lua table encodes as []).
function M.object(t)
  if t == nil or next(t) == nil then
    return vim.empty_dict()
  end
  return t
end

function M.notify_user(msg, level)
  vim.notify('coder: ' .. msg, level or vim.log.levels.INFO)
end

--- A directory: the path itself if it is one, else its parent.
local function dir_of(path)
  local stat = M.uv.fs_stat(path)
  if stat and stat.type == 'directory' then
    return path
  end
  return vim.fn.fnamemodify(path, ':h')
end

--- The nearest ancestor of `path` (inclusive) holding one of `markers`.
function M.find_root(path, markers)
  if not path or path == '' then
    return nil
  end
  local dir = dir_of(vim.fn.fnamemodify(path, ':p'))
  dir = dir:gsub('/+$', '')
  if dir == '' then
    dir = '/'
  end
  while true do
    for _, marker in ipairs(markers) do
      local candidate = (dir == '/' and '' or dir) .. '/' .. marker
      if M.uv.fs_stat(candidate) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir or parent == '' then
      return nil
    end
    dir = parent
  end
end

return M
