"""A hostile repository config runs nothing on the server's git calls.

The workspace's `.git/config` (or a file it includes, which the agent can write since it
lives in the workspace) names programs git would run: `core.fsmonitor` on status and
ls-files, hooks, a `filter` driver named by `.gitattributes` on status/checkout, a
`textconv` driver and `diff.external` on diff, a pager. After `/diff`, the agent's `glob`
(`git ls-files`) and a confirmed `/undo --all`, none of them may have run.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from agent_e2e import api_env, calls, result_text, tool_call, tool_results
from anthropic_server import FakeAnthropicServer, reply
from harness import init_git, lsp_session

FILES = {"a.txt": "alpha\n", "b.py": "x = 1\n", ".gitattributes": "*.txt filter=evil diff=evil\n*.py diff=evil\n"}


def payload(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "PWNED"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\necho \"$0 $*\" >> {marker}\ncat\n")
    script.chmod(0o755)
    return script, marker


def arm(root: Path, script: Path, *, via_include: bool) -> None:
    pairs = [
        ("core.fsmonitor", str(script)),
        ("core.hooksPath", str(script.parent / "hooks")),
        ("filter.evil.clean", str(script)),
        ("filter.evil.smudge", str(script)),
        ("filter.evil.process", str(script)),
        ("filter.evil.required", "true"),
        ("diff.evil.textconv", str(script)),
        ("diff.evil.command", str(script)),
        ("diff.external", str(script)),
        ("core.pager", str(script)),
    ]
    hooks = script.parent / "hooks"
    hooks.mkdir(exist_ok=True)
    for hook in ("pre-commit", "post-checkout", "post-index-change", "reference-transaction"):
        (hooks / hook).write_text(f"#!/bin/sh\n{script} hook-{hook}\n")
        (hooks / hook).chmod(0o755)
    if via_include:
        # The agent can write a workspace file; the config only has to include it.
        inc = root / "tools" / "git.cfg"
        inc.parent.mkdir(exist_ok=True)
        subprocess.run(["git", "config", "-f", str(inc), "include.dummy", "1"], check=True)
        for key, value in pairs:
            subprocess.run(["git", "config", "-f", str(inc), key, value], check=True)
        subprocess.run(["git", "-C", str(root), "config", "include.path", "../tools/git.cfg"], check=True)
    else:
        for key, value in pairs:
            subprocess.run(["git", "-C", str(root), "config", key, value], check=True)


def prove_armed(root: Path, marker: Path) -> None:
    """The trap is real: a plain `git status` with the user's config springs it."""
    subprocess.run(["git", "-C", str(root), "status"], capture_output=True)
    assert marker.exists(), "the hostile config should run code on a plain git call"
    marker.unlink()


@pytest.mark.parametrize("via_include", [False, True], ids=["config", "included-file"])
async def test_diff_and_undo_all_run_nothing_from_the_repo_config(tmp_path: Path, via_include: bool) -> None:
    root = init_git(tmp_path / "ws", FILES)
    script, marker = payload(tmp_path)
    arm(root, script, via_include=via_include)
    (root / "a.txt").write_text("changed\n")
    (root / "b.py").write_text("x = 2\n")
    (root / "new.txt").write_text("untracked\n")
    # racy stat info so status has to look at (and clean-filter) the contents
    os.utime(root / "a.txt", (978307200, 978307200))
    prove_armed(root, marker)
    async with lsp_session(root) as s:
        s.answer_question = lambda p: "Restore to HEAD"
        diff = await s.execute("coder.diff", {})
        assert diff["status"] == "completed", diff
        assert "a.txt" in diff["reply"] and "b.py" in diff["reply"]
        assert not marker.exists(), marker.read_text()
        undo = await s.execute("coder.undo", {"args": "--all"})
        assert undo["status"] == "completed", undo
        assert not (root / "new.txt").exists()
        assert (root / "b.py").read_text() == "x = 1\n"
    assert not marker.exists(), marker.read_text()


async def test_glob_tool_runs_no_fsmonitor(tmp_path: Path) -> None:
    root = init_git(tmp_path / "ws", FILES)
    script, marker = payload(tmp_path)
    arm(root, script, via_include=False)
    prove_armed(root, marker)
    fake = FakeAnthropicServer()
    fake.start()
    try:
        fake.push(calls(tool_call("glob", {"pattern": "*.py"}, "toolu_g1")), reply("done"))
        async with lsp_session(root, env=api_env(fake)) as s:
            result = await s.execute("coder.input", {"text": "find the python files"})
            assert result["status"] == "completed", result
        assert not fake.rejections, fake.rejections
        found = tool_results(fake.message_requests[-1])["toolu_g1"]
        assert "b.py" in result_text(found)
    finally:
        fake.stop()
    assert not marker.exists(), marker.read_text()
