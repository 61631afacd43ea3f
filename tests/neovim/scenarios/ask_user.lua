-- The model calls ask_user (two questions): the plugin asks through vim.ui.select
-- (stubbed, asynchronous like a real picker): "pytest" for the first, then "Other…"
-- with an answer typed into vim.ui.input for the second. `:CoderInput` from a
-- visual range sends the selected lines as the input's context.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/_lib.lua')
local R = T.result

T.run(function()
  local coder = T.setup()
  R.asked = {}
  R.inputs = {}
  vim.ui.select = function(items, opts, on_choice)
    local titles = {}
    for _, item in ipairs(items) do
      table.insert(titles, opts.format_item and opts.format_item(item) or tostring(item))
    end
    table.insert(R.asked, { prompt = opts.prompt, titles = titles, kind = opts.kind })
    local want = #R.asked == 1 and 'pytest' or 'Other…'
    local pick
    for _, item in ipairs(items) do
      if item.label == want then
        pick = item
      end
    end
    vim.defer_fn(function()
      on_choice(pick)
    end, 50)
  end
  vim.ui.input = function(opts, on_confirm)
    table.insert(R.inputs, opts.prompt)
    vim.defer_fn(function()
      on_confirm('ruff and mypy, please')
    end, 50)
  end
  vim.cmd('edit a.txt')
  T.client()
  vim.cmd('1,1CoderInput set up the checks')
  T.wait(60000, function()
    return vim.tbl_contains(R.events, 'turnFinished') and coder.status() == 'coder: idle'
  end, 'the turn to finish')
  R.ok = true
end)
