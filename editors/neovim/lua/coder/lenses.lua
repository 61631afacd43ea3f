-- Code lenses on the lines the agent wrote (contract section 23): who wrote them, and a
-- command that reverts that hunk (`coder.revertHunk`, run by vim.lsp.codelens.run()).
-- Neovim asks for lenses only when told to: on attach, on entering the buffer, after
-- leaving insert mode, and after each turn (turnFinished), for every buffer of the client.
local M = {}

--- Ask the server for the lenses of `bufnr` again (0.7 refreshes the current buffer).
function M.refresh(bufnr)
  if not (vim.lsp.codelens and vim.api.nvim_buf_is_loaded(bufnr)) then
    return
  end
  if vim.fn.has('nvim-0.10') == 1 then
    pcall(vim.lsp.codelens.refresh, { bufnr = bufnr })
  else
    pcall(vim.api.nvim_buf_call, bufnr, vim.lsp.codelens.refresh)
  end
end

--- Every buffer `client_id` is attached to.
function M.refresh_client(client_id)
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.lsp.buf_is_attached(bufnr, client_id) then
      M.refresh(bufnr)
    end
  end
end

local group = nil

--- Keep `bufnr`'s lenses current (called from the client's on_attach).
function M.attach(bufnr)
  group = group or vim.api.nvim_create_augroup('CoderLenses', { clear = true })
  vim.api.nvim_clear_autocmds({ group = group, buffer = bufnr })
  vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave' }, {
    group = group,
    buffer = bufnr,
    callback = function()
      M.refresh(bufnr)
    end,
  })
  M.refresh(bufnr)
end

return M
