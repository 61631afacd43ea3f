-- `/diff turn [N]` (contract section 19): what one submission changed, in a `diff` buffer
-- (`coder://diff/turn-N`, filetype diff, read-only scratch) opened in a split; shown again
-- in the same buffer when the same submission is asked for twice.
local M = {}

--- Opens the diff of a `diff` result that names a submission; returns the buffer, or nil
--- when `res` is not one (the workspace `/diff` stays in the transcript).
function M.show(res)
  local data = type(res) == 'table' and res.data or nil
  if type(data) ~= 'table' or data.kind ~= 'diff' or type(data.submission) ~= 'number' then
    return nil
  end
  local name = 'coder://diff/turn-' .. data.submission
  local text = (data.diff and data.diff ~= '') and data.diff or ('Submission ' .. data.submission .. ' changed no file.')
  local bufnr = vim.fn.bufnr(name)
  if bufnr == -1 then
    bufnr = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(bufnr, name)
    vim.bo[bufnr].buftype = 'nofile'
    vim.bo[bufnr].bufhidden = 'hide'
    vim.bo[bufnr].swapfile = false
  end
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, vim.split(text, '\n', { plain = true }))
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].filetype = 'diff'
  if vim.fn.bufwinid(bufnr) == -1 then
    vim.cmd('botright split')
    vim.api.nvim_win_set_buf(0, bufnr)
  end
  return bufnr
end

return M
