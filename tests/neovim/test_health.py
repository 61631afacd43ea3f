"""`:checkhealth coder` (editors/neovim/lua/coder/health.lua) in a headless Neovim, 0.7 and 0.11,
against the real server with the offline `scripted` provider: every line it reports is OK
(captured as Neovim printed it), and the protocol check reports the server's version; a plugin
whose `cmd` names no executable gets an ERROR that says how to install one."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from harness import init_git
from test_neovim import PLUGIN, _nvim_params

from coder_ls import PROTOCOL_VERSION, __version__

LUA = r"""
local out = os.getenv('CODER_HEALTH_OUT')
require('coder').setup({ cmd = vim.fn.json_decode(os.getenv('CODER_HEALTH_CMD')),
  settings = { provider = 'scripted' } })
vim.cmd('edit ' .. os.getenv('CODER_HEALTH_FILE'))
if os.getenv('CODER_HEALTH_WAIT') == '1' then
  vim.wait(20000, function()
    local c = require('coder').client_for_root(vim.fn.getcwd())
    return c ~= nil and require('coder').server_info(c.id) ~= nil
  end, 50)
end
vim.cmd('checkhealth coder')
vim.fn.writefile(vim.api.nvim_buf_get_lines(0, 0, -1, false), out)
vim.cmd('qa!')
"""

SERVER = Path(sys.executable).parent / "coder-ls"


@pytest.fixture(params=_nvim_params())
def nvim_bin(request: pytest.FixtureRequest) -> str:
    """Both Neovims, as tests/neovim/test_neovim.py runs them (0.7 from Debian, 0.11 from PyPI)."""
    if request.param is None:
        pytest.skip("nvim not found")
    return request.param


def _health(nvim: str, tmp_path: Path, cmd: list[str], wait: bool) -> list[str]:
    ws = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "hi"}]}))
    (tmp_path / "health.lua").write_text(LUA)
    out = tmp_path / "health.txt"
    env = {
        **os.environ,
        "CODER_HEALTH_OUT": str(out),
        "CODER_HEALTH_CMD": json.dumps(cmd),
        "CODER_HEALTH_FILE": str(ws / "a.txt"),
        "CODER_HEALTH_WAIT": "1" if wait else "0",
        "CODER_SCRIPTED_FILE": str(script),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "XDG_STATE_HOME": str(tmp_path / "xdg-state"),
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
    }
    run = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "--cmd", f"set rtp+={PLUGIN}",
         "-c", f"luafile {tmp_path / 'health.lua'}"],
        cwd=ws, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert out.exists(), run.stdout + run.stderr
    return out.read_text().splitlines()


def _reports(lines: list[str]) -> list[str]:
    """The report lines (OK, WARNING, ERROR, INFO), as 0.7 (`- OK:`) and 0.11 (`- ✅ OK`) print them."""
    return [line.strip() for line in lines if line.strip().startswith("- ")]


def test_every_line_is_ok_with_the_server_and_the_offline_provider(nvim_bin, tmp_path):
    assert SERVER.exists(), f"no {SERVER}: the venv's coder-ls (pip install -e .)"
    lines = _health(nvim_bin, tmp_path, [str(SERVER)], wait=True)
    reports = _reports(lines)
    print("\n".join(lines))
    assert len(reports) >= 7, lines
    bad = [r for r in reports if not re.match(r"- (✅ )?OK\b", r)]
    assert not bad, "\n".join(lines)
    text = "\n".join(reports)
    assert f"coder-ls {__version__}, protocol {PROTOCOL_VERSION} (the plugin speaks {PROTOCOL_VERSION})" in text
    assert "scripted: offline, script" in text
    assert "backend bwrap" in text or "backend landlock" in text
    assert "experimental.coderAskUser" in text
    assert f"running for {tmp_path / 'ws'}: coder-ls {__version__}, protocol {PROTOCOL_VERSION}" in text


def test_a_missing_server_is_an_error_that_says_how_to_install_it(nvim_bin, tmp_path):
    lines = _health(nvim_bin, tmp_path, ["/nowhere/coder-ls"], wait=False)
    text = "\n".join(lines)
    assert "ERROR" in text and "`/nowhere/coder-ls` is not found" in text, text
    assert "pipx install coder-ls" in text


@pytest.fixture(autouse=True)
def _no_key(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
