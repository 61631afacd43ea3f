-- Code action "Coder: Fix" on a range of a.txt: the scripted model calls the
-- edit tool, the edit comes back as workspace/applyEdit and lands in the buffer;
-- with save_edited_files (the default) the plugin then writes it to disk.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/_lib.lua')
local util = require('coder.util')
local R = T.result

T.run(function()
  local coder = T.setup()
  -- what the server said it wrote itself (editApplied.onDisk), and what Neovim :wrote
  R.on_disk = vim.empty_dict()
  R.writes = {}
  coder.on_event(function(ev)
    if ev.type == 'editApplied' then
      R.on_disk[vim.fn.fnamemodify(vim.uri_to_fname(ev.uri), ':t')] = ev.onDisk == true
    end
  end)
  vim.api.nvim_create_autocmd('BufWritePost', {
    callback = function(args)
      table.insert(R.writes, vim.fn.fnamemodify(args.file, ':t'))
    end,
  })
  R.asked = {}
  vim.ui.select = function(items, opts, on_choice)
    local pick
    local titles = {}
    for _, item in ipairs(items) do
      local title = opts.format_item and opts.format_item(item) or tostring(item)
      table.insert(titles, title)
      if title == 'Allow once' then
        pick = item
      end
    end
    table.insert(R.asked, { prompt = opts.prompt, titles = titles })
    on_choice(pick)
  end
  vim.cmd('edit a.txt')
  local buf = vim.api.nvim_get_current_buf()
  local client = T.client()
  T.wait(10000, function()
    return vim.lsp.buf_is_attached(buf, client.id)
  end, 'a.txt to be attached')
  R.capabilities_code_action = client.server_capabilities and client.server_capabilities.codeActionProvider
    or (client.resolved_capabilities and client.resolved_capabilities.code_action)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 3 } },
    context = { diagnostics = {} },
  }
  local actions
  util.request(client, 'textDocument/codeAction', params, function(err, result)
    R.code_action_error = err and (err.message or tostring(err)) or nil
    actions = result or {}
  end, buf)
  T.wait(20000, function()
    return actions ~= nil
  end, 'the code actions')
  R.action_titles = {}
  local fix
  for _, a in ipairs(actions) do
    table.insert(R.action_titles, a.title)
    if a.title == 'Coder: Fix' then
      fix = a
    end
  end
  if not fix then
    error('no "Coder: Fix" code action among ' .. vim.inspect(R.action_titles), 0)
  end
  if fix.edit then
    vim.lsp.util.apply_workspace_edit(fix.edit, client.offset_encoding or 'utf-16')
  end
  local res
  local cmd = fix.command
  if type(cmd) == 'table' then
    coder.execute(cmd.command, cmd.arguments and cmd.arguments[1] or {}, function(r)
      res = r
    end, { bufnr = buf })
    T.wait(60000, function()
      return res ~= nil
    end, 'the code action command to finish')
  end
  R.fix_result = res
  T.record_saved(buf) -- buffer, modified, disk
  R.ok = true
end)
