"""The Neovim plugin shows `hookRan` as one compact transcript line (issue 18), on the
plugin's floor (Debian's nvim 0.7.2, the first `nvim` on PATH)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

PLUGIN = Path(__file__).resolve().parents[2] / "editors" / "neovim"

SCRIPT = """
local t = require('coder.transcript')
t.on_event({type = 'hookRan', submissionId = 's', event = 'PreToolUse', name = 'python3 guard.py',
  decision = 'deny', ms = 12})
t.on_event({type = 'hookRan', submissionId = 's', event = 'Stop', name = './check.sh', decision = 'failed', ms = 3})
io.stdout:write(vim.fn.json_encode(t.lines()))
"""


@pytest.mark.skipif(shutil.which("nvim") is None, reason="nvim is not installed")
def test_hook_ran_is_one_line_per_hook(tmp_path: Path) -> None:
    script = tmp_path / "hookran.lua"
    script.write_text(SCRIPT + "\nvim.cmd('qa!')\n")
    out = subprocess.run(
        ["nvim", "--headless", "-u", "NONE", "-i", "NONE", "--cmd", f"set rtp+={PLUGIN}", "-c", f"luafile {script}"],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    lines = json.loads(out.stdout.strip() or out.stderr.strip())
    assert "- hook PreToolUse python3 guard.py: denied (12 ms)" in lines, out
    assert "- hook Stop ./check.sh: failed (3 ms)" in lines, out
