-- /undo --all asks through window/showMessageRequest; the answer comes from a
-- stubbed, asynchronous vim.ui.select (the first choice that is not a cancel).
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/_lib.lua')
local R = T.result

T.run(function()
  local coder = T.setup()
  R.asked = {}
  vim.ui.select = function(items, opts, on_choice)
    local titles = {}
    local pick
    for _, item in ipairs(items) do
      local title = opts.format_item and opts.format_item(item) or tostring(item)
      table.insert(titles, title)
      if not pick and not title:lower():match('cancel') and not title:lower():match('^no')
        and not title:lower():match('deny') and not title:lower():match('keep') then
        pick = item
      end
    end
    table.insert(R.asked, { prompt = opts.prompt, titles = titles, kind = opts.kind })
    -- answer later, like a real picker: the handler must wait for it
    vim.defer_fn(function()
      on_choice(pick)
    end, 100)
  end
  T.client()
  local res
  coder.input('/undo --all', {}, function(r)
    res = r
  end)
  T.wait(30000, function()
    return res ~= nil
  end, 'the /undo --all result')
  R.undo = res
  R.ok = true
end)
