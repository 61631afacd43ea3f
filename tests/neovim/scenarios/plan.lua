-- Plan mode (contract section 22): `/plan` proposes a plan without writing; when its turn
-- ends the plugin offers Approve / Revise / Reject through vim.ui.select (stubbed here to
-- pick "Approve (run it in auto-edit)"), and the approved plan's turn writes a.txt.
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
      if opts.kind == 'coder.plan' and title:match('auto%-edit') then
        pick = item
      end
    end
    table.insert(R.asked, { prompt = opts.prompt, titles = titles, kind = opts.kind })
    vim.defer_fn(function()
      on_choice(pick)
    end, 100)
  end
  T.client()
  local res
  coder.input('/plan change foo to bar in a.txt', {}, function(r)
    res = r
  end)
  T.wait(30000, function()
    return res ~= nil
  end, 'the /plan result')
  R.plan_result = res
  R.disk_after_plan = vim.fn.readfile('a.txt')
  T.wait(30000, function()
    return vim.fn.readfile('a.txt')[1] == 'bar'
  end, 'the approved plan writing a.txt')
  R.disk = vim.fn.readfile('a.txt')
  R.ok = true
end)
