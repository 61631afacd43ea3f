"""The Emacs (eglot) configuration of docs/editors.md, run for real.

The elisp block under "## Emacs (eglot)" is extracted from the doc (so the doc
is what is tested), loaded in `emacs --batch -q` (Debian `emacs-nox` 28 and
`elpa-eglot` 1.9), and driven by driver_emacs.el against the real server:
a `!cmd`, `/help`, an agent edit of the open buffer (scripted provider) and
`/undo`. Skipped when emacs or eglot is missing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "editors.md"
DRIVER = Path(__file__).resolve().parent / "driver_emacs.el"
EMACS = shutil.which("emacs")


def _has_eglot() -> bool:
    if EMACS is None:
        return False
    proc = subprocess.run(
        [EMACS, "--batch", "-q", "--eval", "(require 'eglot)"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
    )
    return proc.returncode == 0


pytestmark = [
    pytest.mark.skipif(EMACS is None, reason="emacs is not installed (apt-get install emacs-nox elpa-eglot)"),
    pytest.mark.skipif(EMACS is not None and not _has_eglot(), reason="eglot is missing (apt-get install elpa-eglot)"),
]


def documented_config() -> str:
    """The first ```elisp block of the "## Emacs (eglot)" section."""
    text = DOC.read_text()
    section = text[text.index("## Emacs (eglot)") :]
    match = re.search(r"```elisp\n(.*?)```", section, re.S)
    assert match, "no elisp block in the Emacs (eglot) section of docs/editors.md"
    return match.group(1)


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_documented_eglot_config(tmp_path: Path) -> None:
    assert EMACS is not None
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q")
    git(ws, "config", "user.email", "test@example.com")
    git(ws, "config", "user.name", "Test")
    (ws / "a.txt").write_text("foo\n")
    git(ws, "add", "a.txt")
    git(ws, "commit", "-q", "-m", "init")
    script = {
        "turns": [
            {"toolCalls": [{"name": "edit", "input": {"path": "a.txt", "oldString": "foo", "newString": "bar"}}]},
            {"text": "all done"},
        ]
    }
    (ws / "script.json").write_text(json.dumps(script))
    config = tmp_path / "coder-eglot.el"
    config.write_text(documented_config())
    result_file = tmp_path / "result.json"
    home = tmp_path / "home"
    home.mkdir()
    # the preset is the user's own setting (a workspace file cannot widen it untrusted)
    (home / ".config" / "coder").mkdir(parents=True)
    # so is the provider: an untrusted workspace cannot choose what plays the agent
    user_config = {"permissions": "auto-edit", "provider": "scripted", "scriptedFile": str(ws / "script.json")}
    (home / ".config" / "coder" / "config.json").write_text(json.dumps(user_config))
    env = dict(os.environ)
    env.update(
        {
            # the documented config runs "coder-ls" from PATH: this venv's
            "PATH": str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "CODER_TEST_RESULT": str(result_file),
            "ANTHROPIC_API_KEY": "",
        }
    )
    try:
        proc = subprocess.run(
            [EMACS, "--batch", "-q", "-l", str(config), "-l", str(DRIVER)],
            cwd=ws,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=180,
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"emacs timed out: {e.stderr!r}")
    if not result_file.exists():
        pytest.fail(f"emacs wrote no result (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    r: dict[str, Any] = json.loads(result_file.read_text())
    where = f"\nresult: {json.dumps(r, indent=1)}\nstderr: {proc.stderr[-3000:]}"
    assert not r.get("error"), where
    assert r.get("ok") is True, where
    # output printed once (the events streamed it; the result does not repeat it)
    assert r["shell_count"] == 1, where
    assert r["help_undo_count"] >= 1, where
    assert r["done_count"] == 1, where
    # the edit applied without eglot's "Proceed?" (stdin is /dev/null) and saved
    assert r["after_edit_buffer"] == "bar\n", where
    assert r["after_edit_modified"] is None or r["after_edit_modified"] is False, where
    assert r["after_edit_disk"] == "bar\n", where
    # /undo found it and restored the file
    assert r["undo_nothing"] in (None, False), where
    assert r["after_undo_disk"] == "foo\n", where
    assert (ws / "a.txt").read_text() == "foo\n"
