"""End-to-end tests of the Neovim plugin (editors/neovim) against the real server.

Each scenario is a Lua script in tests/neovim/scenarios/ run by a headless
Neovim (0.7.2 and later) in a fresh git workspace:

    nvim --headless -u NONE -i NONE --cmd 'set rtp+=<repo>/editors/neovim' \
         -c 'luafile <scenario>'

The script drives the server through the plugin, writes what it saw to a JSON
file (CODER_TEST_RESULT) and quits; the assertions are here.

The server command is `[sys.executable, "-m", "coder_ls"]`; set
CODER_NVIM_TEST_CMD (a JSON list) to run the scenarios against another one, and
CODER_NVIM_BIN to use another Neovim than the `nvim` on PATH.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "neovim"
SCENARIOS = Path(__file__).resolve().parent / "scenarios"
NVIM = shutil.which(os.environ.get("CODER_NVIM_BIN", "nvim"))

pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim is not installed (apt-get install neovim)")


def server_cmd() -> list[str]:
    override = os.environ.get("CODER_NVIM_TEST_CMD")
    if override:
        return list(json.loads(override))
    return [sys.executable, "-m", "coder_ls"]


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q")
    git(ws, "config", "user.email", "test@example.com")
    git(ws, "config", "user.name", "Test")
    git(ws, "config", "commit.gpgsign", "false")
    (ws / "a.txt").write_text("foo\n")
    git(ws, "add", "a.txt")
    git(ws, "commit", "-q", "-m", "init")
    return ws


def run_scenario(
    name: str, ws: Path, timeout: float = 90, setup: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Runs scenarios/<name>.lua in a headless Neovim; returns its result JSON.

    `setup`: extra options for require('coder').setup() (CODER_TEST_SETUP).
    """
    assert NVIM is not None
    result_file = ws.parent / f"{name}.result.json"
    home = ws.parent / "home"
    (home / ".config").mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update(
        {
            "CODER_TEST_CMD": json.dumps(server_cmd()),
            "CODER_TEST_RESULT": str(result_file),
            "CODER_TEST_SETUP": json.dumps(setup or {}),
            # keep the user's own config (nvim and coder) out of the test
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "NVIM_LOG_FILE": str(ws.parent / "nvim.log"),
            # no real model is ever called from these tests
            "ANTHROPIC_API_KEY": "",
        }
    )
    cmd = [
        NVIM,
        "--headless",
        "-u",
        "NONE",
        "-i",
        "NONE",
        "--cmd",
        f"set rtp+={PLUGIN}",
        "-c",
        f"luafile {SCENARIOS / (name + '.lua')}",
    ]
    try:
        proc = subprocess.run(
            cmd, cwd=ws, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"nvim timed out after {timeout}s in scenario {name}: stderr={e.stderr!r}")
    if not result_file.exists():
        pytest.fail(
            f"scenario {name} wrote no result (exit {proc.returncode}):\nstdout: {proc.stdout}\nstderr: {proc.stderr}"
        )
    result: dict[str, Any] = json.loads(result_file.read_text())
    result["_stderr"] = proc.stderr[-4000:]
    return result


def check(result: dict[str, Any]) -> None:
    """The scenario ran to its end without a Lua error or a timeout."""
    assert not result.get("error"), f"scenario error: {result.get('error')}\nresult: {json.dumps(result, indent=1)}"
    assert result.get("ok") is True, json.dumps(result, indent=1)


def test_shell_output_lands_in_transcript(workspace: Path) -> None:
    r = run_scenario("shell", workspace)
    check(r)
    assert r["transcript_name"] == "coder://transcript"
    assert "hi" in r["transcript"], r["transcript"]
    assert "shellOutput" in r["events"], r["events"]
    assert r["status_line"] == "coder: idle"


def test_slash_command_through_lua_api(workspace: Path) -> None:
    r = run_scenario("slash", workspace)
    check(r)
    help_result = r["help"]
    assert help_result["mode"] == "command", help_result
    assert help_result["status"] == "completed", help_result
    assert help_result["reply"], help_result
    assert help_result["sessionId"], help_result
    assert "/help" in r["completion"], r["completion"]
    assert all(item.startswith("/he") for item in r["completion"]), r["completion"]
    assert {"/help", "/model", "/undo"} <= set(r["completion_all"]), r["completion_all"]
    unknown = r["unknown"]
    assert unknown["mode"] == "error" and unknown["status"] == "failed", unknown
    assert unknown["error"]["message"], unknown


def test_approval_via_vim_ui_select_undo_all(workspace: Path) -> None:
    (workspace / "a.txt").write_text("changed\n")
    (workspace / "b.txt").write_text("untracked\n")
    r = run_scenario("approval", workspace)
    check(r)
    assert r["asked"], "vim.ui.select was never called (no window/showMessageRequest)"
    assert r["asked"][0]["kind"] == "coder.approval"
    undo = r["undo"]
    assert undo["status"] == "completed", undo
    assert undo["mode"] == "command", undo
    assert (workspace / "a.txt").read_text() == "foo\n"
    assert not (workspace / "b.txt").exists()


def write_scripted_fix(workspace: Path, *more_edits: dict[str, str]) -> None:
    """The scripted provider: one turn calling `edit` (foo -> bar in a.txt, then
    `more_edits`), then "done"."""
    coder_dir = workspace / ".coder"
    coder_dir.mkdir()
    (coder_dir / "config.json").write_text(json.dumps({"provider": "scripted", "scriptedFile": "script.json"}))
    edits = [{"path": "a.txt", "oldString": "foo", "newString": "bar"}, *more_edits]
    script = {
        "turns": [
            {"toolCalls": [{"name": "edit", "input": e} for e in edits]},
            {"text": "done"},
        ]
    }
    (workspace / "script.json").write_text(json.dumps(script))


def test_code_action_fix_applies_edit_to_buffer(workspace: Path) -> None:
    write_scripted_fix(workspace)
    r = run_scenario("code_action", workspace)
    check(r)
    assert "Coder: Fix" in r["action_titles"], r["action_titles"]
    fix = r["fix_result"]
    assert fix is not None and fix["status"] == "completed", fix
    # the edit came through workspace/applyEdit into the open buffer
    assert r["buffer"] == ["bar"], r["buffer"]
    assert "editApplied" in r["events"], r["events"]
    # ... and save_edited_files (default on) wrote the buffer, so the shell and tests see it
    assert r["save_edited_files"] is True
    assert r["modified"] is False, r
    assert r["disk"] == ["bar"], r["disk"]
    assert (workspace / "a.txt").read_text() == "bar\n"


def test_edit_of_a_file_not_open_leaves_no_modified_buffer(workspace: Path) -> None:
    """Neovim loads a file that is not open to apply the edit, and the server writes
    it to disk too: the plugin must not leave a modified buffer nor hang on
    "file changed since reading it" (the turn would time out)."""
    (workspace / "b.txt").write_text("one\ntwo\n")
    git(workspace, "add", "b.txt")
    git(workspace, "commit", "-q", "-m", "b")
    write_scripted_fix(workspace, {"path": "b.txt", "oldString": "two", "newString": "three"})
    r = run_scenario("code_action", workspace)
    check(r)
    assert r["fix_result"]["status"] == "completed", r["fix_result"]
    assert r["events"].count("editApplied") == 2, r["events"]
    assert (workspace / "a.txt").read_text() == "bar\n"
    assert (workspace / "b.txt").read_text() == "one\nthree\n"
    other = [b for b in r["loaded_buffers"] if b["name"].endswith("/b.txt")]
    assert other and other[0]["lines"] == ["one", "three"], r["loaded_buffers"]
    assert not any(b["modified"] for b in r["loaded_buffers"]), r["loaded_buffers"]


def test_code_action_fix_without_save_edited_files(workspace: Path) -> None:
    write_scripted_fix(workspace)
    r = run_scenario("code_action", workspace, setup={"save_edited_files": False})
    check(r)
    assert r["fix_result"] is not None and r["fix_result"]["status"] == "completed", r["fix_result"]
    assert "editApplied" in r["events"], r["events"]
    # the edit is in the buffer (unsaved), the file on disk is unchanged
    assert r["save_edited_files"] is False
    assert r["buffer"] == ["bar"], r["buffer"]
    assert r["modified"] is True, r
    assert r["disk"] == ["foo"], r["disk"]
    assert (workspace / "a.txt").read_text() == "foo\n"


def test_interrupt_cancels_running_shell(workspace: Path) -> None:
    r = run_scenario("interrupt", workspace)
    check(r)
    assert r["status_running"].startswith("coder: running"), r["status_running"]
    res = r["result"]
    assert res["status"] == "cancelled", res
    assert r["elapsed"] < 5, r["elapsed"]
    assert r["status_line"] == "coder: idle"


def test_code_action_through_vim_lsp_buf_code_action(workspace: Path) -> None:
    write_scripted_fix(workspace)
    r = run_scenario("code_action_native", workspace)
    check(r)
    kinds = [a["kind"] for a in r["asked"]]
    assert "codeaction" in kinds, r["asked"]
    assert r["buffer"] == ["bar"], r["buffer"]
    assert r["modified"] is False and r["disk"] == ["bar"], r
    assert "done" in r["transcript"], r["transcript"]


def test_sessions_model_and_resume(workspace: Path) -> None:
    r = run_scenario("sessions_model", workspace)
    check(r)
    assert r["first_session"] and r["second_session"] and r["first_session"] != r["second_session"]
    sessions = r["sessions"]["res"]["data"]
    assert sessions["kind"] == "sessions", sessions
    ids = [s["id"] for s in sessions["sessions"]]
    assert r["first_session"] in ids, ids
    assert r["first_session"][:8] in r["messages"], r["messages"]
    model = r["model_data"]["data"]
    assert model["kind"] == "model" and model["models"], model
    kinds = [a["kind"] for a in r["asked"]]
    assert "coder.model" in kinds and "coder.session" in kinds, r["asked"]
    assert r["model_switch"]["status"] == "completed", r["model_switch"]
    config = json.loads((workspace / ".coder" / "config.json").read_text())
    assert config.get("model") == r["picked_model"], config
    assert r["resume"]["status"] == "completed", r["resume"]
    assert r["after_resume_session"] == r["first_session"]
