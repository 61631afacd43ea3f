-- The editor as the agent's eyes (contract section 23) with a real language server:
-- pyright (CODER_TEST_PYRIGHT: its pyright-langserver) attached to Python buffers, in
-- workspace diagnostic mode. Once its diagnostics have settled, a turn runs (the fake
-- Messages API scripts the model's diagnostics / definition calls); the plugin answers
-- coder/diagnostics and coder/languageQuery from vim.diagnostic and pyright.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/_lib.lua')
local R = T.result

T.run(function()
  vim.cmd('filetype on') -- -u NONE starts without it: the FileType event starts pyright
  local coder = T.setup()
  local root = vim.fn.getcwd()
  local pyright_id
  local function attach(buf)
    if not pyright_id then
      pyright_id = vim.lsp.start_client({
        name = 'pyright',
        cmd = { vim.env.CODER_TEST_PYRIGHT, '--stdio' },
        root_dir = root,
        workspace_folders = { { uri = vim.uri_from_fname(root), name = 'ws' } },
        settings = { python = { analysis = { diagnosticMode = 'workspace' } } },
      })
    end
    vim.lsp.buf_attach_client(buf, pyright_id)
  end
  vim.api.nvim_create_autocmd('FileType', {
    pattern = 'python',
    callback = function(args)
      attach(args.buf)
    end,
  })
  for _, file in ipairs(vim.split(vim.env.CODER_TEST_OPEN, ' ', { trimempty = true })) do
    vim.cmd('edit ' .. file) -- open files get diagnostics whatever the diagnostic mode
  end
  T.wait(90000, function()
    return #vim.diagnostic.get(nil) > 0
  end, "pyright's first diagnostics")
  -- settled: at least CODER_TEST_MIN_FILES files have diagnostics (pyright reports file
  -- after file), and the count stays the same for 3 s
  local want_files = tonumber(vim.env.CODER_TEST_MIN_FILES or '1')
  local last, since = -1, vim.loop.now()
  T.wait(120000, function()
    local all = vim.diagnostic.get(nil)
    local files = {}
    for _, d in ipairs(all) do
      files[d.bufnr] = true
    end
    if #all ~= last then
      last, since = #all, vim.loop.now()
    end
    return vim.tbl_count(files) >= want_files and vim.loop.now() - since > 3000
  end, 'the diagnostics to settle')
  R.nvim_diagnostics = last
  T.client()
  local res
  coder.input(vim.env.CODER_TEST_PROMPT, function(r)
    res = r
  end)
  T.wait(90000, function()
    return res ~= nil
  end, 'the turn to finish')
  R.result = res
  R.ok = true
end)
