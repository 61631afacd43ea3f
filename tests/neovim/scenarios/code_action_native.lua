-- The same fix through Neovim's own UI: vim.lsp.buf.code_action (its menu is
-- vim.ui.select, stubbed to pick "Coder: Fix"), whose command the plugin runs.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/_lib.lua')
local R = T.result

T.run(function()
  local coder = T.setup()
  R.asked = {}
  vim.ui.select = function(items, opts, on_choice)
    local titles, pick = {}, nil
    for _, item in ipairs(items) do
      local title = opts.format_item and opts.format_item(item) or tostring(item)
      table.insert(titles, title)
      if title == 'Coder: Fix' or title == 'Allow once' then
        pick = item
      end
    end
    table.insert(R.asked, { kind = opts.kind, titles = titles })
    vim.schedule(function()
      on_choice(pick)
    end)
  end
  vim.cmd('edit a.txt')
  local buf = vim.api.nvim_get_current_buf()
  local client = T.client()
  T.wait(10000, function()
    return vim.lsp.buf_is_attached(buf, client.id)
  end, 'a.txt to be attached')
  if vim.fn.has('nvim-0.9') == 1 then
    vim.lsp.buf.code_action({ range = { start = { 1, 0 }, ['end'] = { 1, 3 } } })
  else
    vim.lsp.buf.range_code_action(nil, { 1, 0 }, { 1, 3 })
  end
  T.wait(60000, function()
    return vim.tbl_contains(R.events, 'turnFinished')
  end, 'the turn to finish')
  T.wait(10000, function()
    return coder.status() == 'coder: idle'
  end, 'idle')
  T.record_saved(buf) -- buffer, modified, disk
  R.ok = true
end)
