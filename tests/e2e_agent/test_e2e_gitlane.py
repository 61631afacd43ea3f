"""The agent's everyday git writes run sandboxed (the git lane) with their effect in place and
no question, through a real LSP client, the real server, real bubblewrap and real git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from agent_e2e import APP, api_env, calls, result_text, tool_call, tool_results
from anthropic_server import FakeAnthropicServer, reply
from harness import Session, init_git, lsp_session
from lsprotocol import types

from coder_ls.guard import sandbox

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
    pytest.mark.skipif(sandbox.bwrap_path() is None, reason="bubblewrap does not work on this machine"),
]

MESSAGE = "Add y\n\nThe tests need it."


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


async def agent_runs(s: Session, fake: FakeAnthropicServer, *commands: str) -> list[str]:
    """One turn in which the model runs `commands` with bash, one per step; their outputs."""
    ids = [f"toolu_git{i}" for i in range(len(commands))]
    fake.push(*[calls(tool_call("bash", {"command": c}, i)) for c, i in zip(commands, ids, strict=True)])
    fake.push(reply("done"))
    result = await s.execute("coder.input", {"text": "go"})
    assert result["status"] == "completed", result
    results = tool_results(fake.message_requests[-1])
    return [result_text(results[i]) for i in ids]


async def test_everyday_git_writes_run_sandboxed_without_a_question(tmp_path, fake):
    root = init_git(tmp_path / "ws", {"app.py": APP, "src/lib.py": "x = 1\n"})
    git(root, "config", "user.name", "Agent")
    git(root, "config", "user.email", "agent@example.invalid")
    config_before = (root / ".git" / "config").read_text()
    async with lsp_session(root, env=api_env(fake)) as s:
        s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"coder": {"permissions": "yolo"}})
        )
        outs = await agent_runs(
            s,
            fake,
            "echo 'y = 2' >> src/lib.py",
            "git add src/lib.py",
            f"git commit -m \"$(cat <<'EOF'\n{MESSAGE}\nEOF\n)\"",
            "git checkout -b feature",
            "echo 'z = 3' > src/feature.py && git add src/feature.py && git commit -m 'Add feature'",
            "git switch main",
            "git branch topic",
            "echo 'w = 4' >> src/lib.py && git stash",
            "git stash list",
            "git stash pop",
            "git commit -am 'Add w'",
            "git merge --no-edit feature",
            "cd src && git switch topic && echo t > topic.py && git add topic.py && git commit -m 'Add topic'",
            "git rebase main",
            "git switch main && git reset --hard HEAD~1",
            "git tag v1",
            "git log --oneline --all",
        )
        assert s.questions == []
    for out in outs:
        assert "Read-only file system" not in out and "exit code: 0" in out, out
    assert "stash@{0}: WIP on main" in outs[8]
    assert "does not carry over" in outs[12] and "exit code: 0" in outs[13]  # the cd ended with the lane
    log = git(root, "log", "--format=%s", "main")
    assert log.split("\n")[:3] == ["Add w", "Add y", "init"], log  # the merge was reset away
    assert git(root, "log", "-1", "--format=%B", "main~1").strip() == MESSAGE
    assert git(root, "log", "--format=%s", "feature").startswith("Add feature\n")
    topic = git(root, "log", "--format=%s", "topic").split("\n")
    assert topic[:3] == ["Add topic", "Merge branch 'feature'", "Add w"], topic  # rebased onto the merge
    assert git(root, "tag") == "v1\n" and git(root, "stash", "list") == ""
    assert git(root, "rev-parse", "v1") == git(root, "rev-parse", "main")
    assert git(root, "status", "--porcelain") == ""
    assert (root / "src" / "lib.py").read_text() == "x = 1\ny = 2\nw = 4\n"
    assert not (root / "src" / "feature.py").exists()
    assert (root / ".git" / "config").read_text() == config_before
    assert not (root / ".git" / "commondir").exists() and not (root / ".coder" / "quarantine").exists()
