-- :CoderShell echo hi lands in the coder://transcript buffer.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/_lib.lua')
local R = T.result

T.run(function()
  local coder = T.setup()
  vim.cmd('CoderTranscript')
  R.transcript_name = vim.api.nvim_buf_get_name(0)
  vim.cmd('wincmd p')
  vim.cmd('CoderShell echo hi')
  T.wait(30000, function()
    for _, line in ipairs(coder.transcript.lines()) do
      if line == 'hi' then
        return true
      end
    end
    return false
  end, '"hi" in the transcript')
  T.wait(30000, function()
    return coder.status() == 'coder: idle'
  end, 'the command to finish')
  R.ok = true
end)
