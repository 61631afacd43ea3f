"""The Neovim plugin's side of notifications (contract section 22): FocusLost / FocusGained
send `coder.focus {focused}` to each coder client, the plugin declares
`experimental.coderNotify`, and `coder/notify` is shown with vim.notify. Run on both
floors (Debian's 0.7.2 and the venv's 0.11) with a stand-in client: the server's side is
tests/e2e_agent/test_e2e_notify.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from test_neovim import PLUGIN, nvim  # noqa: F401 (the fixture)

SCRIPT = """
local sent, notes = {}, {}
local fake = {
  id = 1, name = 'coder_ls',
  is_stopped = function() return false end,
  request = function(a, b, c)
    if type(a) == 'table' then a, b = b, c end  -- client:request (0.11) or client.request (0.7)
    table.insert(sent, { method = a, params = b })
    return true, 1
  end,
}
local other = vim.tbl_extend('force', fake, { name = 'pyright' })
vim.lsp.get_clients = function() return { fake, other } end
vim.lsp.get_active_clients = vim.lsp.get_clients
vim.notify = function(msg, level) table.insert(notes, { msg = msg, level = level }) end
local coder = require('coder')
coder.setup({ autostart = false })
vim.cmd('doautocmd FocusLost')
vim.cmd('doautocmd FocusGained')
local handlers = coder.client_config(vim.fn.getcwd()).handlers
handlers['coder/notify'](nil, { kind = 'turnFinished', status = 'completed', message = 'Coder finished: done.' },
  { client_id = 1 })
handlers['coder/notify'](nil, { kind = 'turnFinished', status = 'failed', message = 'Coder: the turn failed.' },
  { client_id = 1 })
vim.wait(1000, function() return #notes >= 2 end)
io.stdout:write(vim.fn.json_encode({
  sent = sent, notes = notes, warn = vim.log.levels.WARN, info = vim.log.levels.INFO,
  declares = coder.client_capabilities().experimental.coderNotify == true,
}))
"""


def test_focus_is_sent_and_coder_notify_is_shown(nvim: str, tmp_path: Path) -> None:  # noqa: F811
    script = tmp_path / "focus.lua"
    script.write_text(SCRIPT + "\nvim.cmd('qa!')\n")
    out = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "--cmd", f"set rtp+={PLUGIN}", "-c", f"luafile {script}"],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    got = json.loads(out.stdout.strip() or out.stderr.strip())
    assert got["declares"] is True, out
    assert got["sent"] == [
        {"method": "workspace/executeCommand", "params": {"command": "coder.focus", "arguments": [{"focused": False}]}},
        {"method": "workspace/executeCommand", "params": {"command": "coder.focus", "arguments": [{"focused": True}]}},
    ], out
    assert got["notes"] == [
        {"msg": "coder: Coder finished: done.", "level": got["info"]},
        {"msg": "coder: Coder: the turn failed.", "level": got["warn"]},
    ], out
