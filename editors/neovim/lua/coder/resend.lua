--- Edit and resend (contract section 22): pick a past submission of the current session
--- (the server's `/rewind` list), edit its text, and send it with `replaces`: the server
--- runs it in a new session forked before that submission (the original is kept, the
--- files go back as `/rewind --code`). `:CoderResend`.
local M = {}

--- `coder`: the plugin's module (its `execute`, `input` and `report`).
function M.run(coder)
  coder.execute('coder.rewind', {}, function(res)
    if type(res) ~= 'table' or res.mode == 'error' then
      return coder.report(res)
    end
    local subs = (res.data or {}).submissions or {}
    if #subs == 0 then
      return vim.notify('coder: this session has no message to edit yet', vim.log.levels.INFO)
    end
    vim.ui.select(subs, {
      prompt = 'Edit and resend which message?',
      kind = 'coder.resend',
      format_item = function(s)
        return string.format('%d  %s', s.index, s.text)
      end,
    }, function(choice)
      if not choice then
        return
      end
      -- `text` is the message's first line (what /rewind lists): the starting point
      vim.ui.input({ prompt = 'Resend: ', default = choice.text }, function(text)
        if not text or vim.trim(text) == '' then
          return
        end
        coder.input(text, { replaces = choice.submissionId })
      end)
    end)
  end, { progress = false })
end

return M
