-- The editor as the agent's eyes (contract section 23): the coder client answers
--   coder/diagnostics {uris?}  -> [{uri, diagnostics}] from vim.diagnostic.get()
--   coder/languageQuery {kind, uri?, position?, query?} -> Location[] | SymbolInformation[] | Hover | null
-- from the other language servers attached in this Neovim (never coder_ls itself),
-- each asked with request_sync, bounded below the server's own 5 s wait.
-- Works on 0.7.2 (client.request_sync, vim.lsp.buf_get_clients) and 0.11 (client:request_sync).
local M = {}

M.timeout_ms = 4000
M.own_name = 'coder_ls' -- the plugin's client name (init.lua sets it from config.name)

local SEVERITY = { 1, 2, 3, 4 }

local function is_array(t)
  return type(t) == 'table' and (t[1] ~= nil or next(t) == nil)
end

local function others(clients)
  local out = {}
  for _, c in pairs(clients or {}) do
    if c.name ~= M.own_name then
      table.insert(out, c)
    end
  end
  return out
end

local function clients_of(bufnr)
  if vim.lsp.get_clients then
    return others(vim.lsp.get_clients(bufnr and { bufnr = bufnr } or nil))
  end
  if bufnr then
    return others(vim.lsp.buf_get_clients(bufnr))
  end
  return others(vim.lsp.get_active_clients())
end

local function request_sync(client, method, params, bufnr)
  if vim.fn.has('nvim-0.11') == 1 then
    return client:request_sync(method, params, M.timeout_ms, bufnr)
  end
  return client.request_sync(method, params, M.timeout_ms, bufnr)
end

local function supports(client, method)
  if client.supports_method then
    if vim.fn.has('nvim-0.11') == 1 then
      return client:supports_method(method)
    end
    return client.supports_method(method)
  end
  return true
end

--- The buffer of `uri`, loaded (so its filetype starts the language servers the user set up).
local function buffer_of(uri)
  local bufnr = vim.uri_to_bufnr(uri)
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    vim.fn.bufload(bufnr)
    vim.api.nvim_buf_call(bufnr, function()
      vim.cmd('filetype detect')
    end)
    vim.wait(M.timeout_ms / 2, function()
      return #clients_of(bufnr) > 0
    end, 20)
  end
  return bufnr
end

local function diagnostic_code(d)
  if d.code ~= nil then
    return d.code
  end
  local lsp = d.user_data and d.user_data.lsp
  return lsp and lsp.code or nil
end

function M.diagnostics(_, params)
  params = params or {}
  local wanted
  if type(params.uris) == 'table' then
    wanted = {}
    for _, uri in ipairs(params.uris) do
      wanted[uri] = true
    end
  end
  local by_uri, order = {}, {}
  for _, d in ipairs(vim.diagnostic.get(nil)) do
    local ok, uri = pcall(vim.uri_from_bufnr, d.bufnr)
    if ok and uri and d.source ~= 'coder' and (not wanted or wanted[uri]) then
      if not by_uri[uri] then
        by_uri[uri] = {}
        table.insert(order, uri)
      end
      table.insert(by_uri[uri], {
        range = {
          start = { line = d.lnum, character = d.col },
          ['end'] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col },
        },
        message = d.message,
        severity = SEVERITY[d.severity] or 1,
        source = d.source,
        code = diagnostic_code(d),
      })
    end
  end
  local out = {}
  for _, uri in ipairs(order) do
    table.insert(out, { uri = uri, diagnostics = by_uri[uri] })
  end
  return out
end

local function flatten_document_symbols(symbols, uri, container, out)
  for _, s in ipairs(symbols or {}) do
    if s.location then -- already SymbolInformation
      table.insert(out, s)
    else
      table.insert(out, {
        name = s.name,
        kind = s.kind,
        containerName = container,
        location = { uri = uri, range = s.selectionRange or s.range },
      })
      flatten_document_symbols(s.children, uri, s.name, out)
    end
  end
  return out
end

local METHODS = {
  definition = 'textDocument/definition',
  references = 'textDocument/references',
  hover = 'textDocument/hover',
}

function M.language_query(_, params)
  params = params or {}
  local kind = params.kind
  local results, errors = {}, {}
  local function ask(clients, method, p, bufnr)
    for _, c in ipairs(clients) do
      if supports(c, method) then
        local res, err = request_sync(c, method, p, bufnr)
        if res and res.result ~= nil and res.result ~= vim.NIL then
          table.insert(results, res.result)
        elseif (res and res.err) or err then
          table.insert(errors, tostring(vim.inspect((res and res.err) or err)))
        end
      end
    end
  end
  if kind == 'symbols' then
    if params.query and params.query ~= vim.NIL then
      ask(clients_of(nil), 'workspace/symbol', { query = params.query })
    elseif params.uri then
      local bufnr = buffer_of(params.uri)
      ask(clients_of(bufnr), 'textDocument/documentSymbol', { textDocument = { uri = params.uri } }, bufnr)
    end
    local out = {}
    for _, r in ipairs(results) do
      flatten_document_symbols(r, params.uri, nil, out)
    end
    return out
  end
  local method = METHODS[kind]
  if not method or not params.uri or not params.position then
    return nil, { code = -32602, message = 'coder/languageQuery: kind, uri and position are needed' }
  end
  local bufnr = buffer_of(params.uri)
  local p = { textDocument = { uri = params.uri }, position = params.position }
  if kind == 'references' then
    p.context = { includeDeclaration = true }
  end
  ask(clients_of(bufnr), method, p, bufnr)
  if #results == 0 and #errors > 0 then
    return nil, { code = -32603, message = 'the language servers failed: ' .. table.concat(errors, '; ') }
  end
  if kind == 'hover' then
    return results[1] or vim.NIL
  end
  local out = {}
  for _, r in ipairs(results) do
    if is_array(r) then
      vim.list_extend(out, r)
    else
      table.insert(out, r)
    end
  end
  return out
end

return M
