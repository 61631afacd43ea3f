"""The git lane as `AgentShell.run` drives it, in process, with real bubblewrap and git: the
environment a lane line gets (not the agent's exports but a few inert ones), the cwd it
starts in and does not change, and that a timeout or a cancel leaves no placeholder and no
process behind."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from coder_ls.engine.agentshell import AgentShell
from coder_ls.engine.shell import ShellResult, become_subreaper
from coder_ls.guard import sandbox
from coder_ls.protocol.config import SandboxConfig

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.skipif(sandbox.bwrap_path() is None, reason="bubblewrap does not work on this machine"),
]


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    git(root, "config", "user.name", "Agent")
    git(root, "config", "user.email", "agent@example.invalid")
    (root / "src").mkdir()
    (root / "src" / "a.txt").write_text("1\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    return root


@pytest_asyncio.fixture
async def shell(repo: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[AgentShell]:
    monkeypatch.setenv("SECRET_TOKEN", "s3cr3t-value")  # the server's environment
    was = become_subreaper()
    sh = AgentShell(repo)
    try:
        yield sh
    finally:
        await sh.close()
        if was:
            become_subreaper(False)


async def run(sh: AgentShell, command: str, timeout: float = 30, hide_env: tuple[str, ...] = ()) -> ShellResult:
    box = sh.sandbox_for(SandboxConfig())
    return await sh.run(
        command, on_output=lambda _: None, timeout=timeout, max_output_bytes=100_000, box=box, hide_env=hide_env
    )


def hook(repo: Path, body: str) -> None:
    path = repo / ".git" / "hooks" / "pre-commit"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


async def test_the_lane_has_inert_exports_only_and_leaves_the_cwd(shell: AgentShell, repo: Path) -> None:
    hook(repo, 'echo "hook sees HOME=$HOME FOO=${FOO-unset} editor=$GIT_EDITOR prompt=$GIT_TERMINAL_PROMPT"\n')
    await run(shell, "cd src && export FOO=agent HOME=/nowhere GIT_AUTHOR_NAME=Bot")
    result = await run(shell, "git commit --allow-empty -m lane")
    assert result.exit_code == 0, result.output
    assert f"HOME={os.environ['HOME']} FOO=unset editor=: prompt=0" in result.output
    assert git(repo, "log", "-1", "--format=%an %s") == "Bot lane\n"  # GIT_AUTHOR_NAME passes
    assert result.cwd == str(repo / "src")  # the lane started in the agent's cwd
    moved = await run(shell, "cd .. && git commit --allow-empty -m again")
    assert "does not carry over" in moved.output and moved.cwd == str(repo / "src")
    assert (await run(shell, "pwd")).output == f"{repo / 'src'}\n"


async def test_secrets_are_neither_in_the_lane_nor_in_its_output(shell: AgentShell, repo: Path) -> None:
    hook(repo, 'echo "token=${SECRET_TOKEN-unset}"; echo s3cr3t-value\n')
    result = await run(shell, "git commit --allow-empty -m s", hide_env=("SECRET_TOKEN",))
    assert "token=unset" in result.output and "s3cr3t-value" not in result.output


async def test_a_timeout_ends_the_lane_and_its_placeholders(shell: AgentShell, repo: Path) -> None:
    hook(repo, "( setsid sleep 60 </dev/null >/dev/null 2>&1 & ) ; sleep 60\n")
    result = await run(shell, "git commit --allow-empty -m slow", timeout=1.5)
    assert result.timed_out and result.exit_code is None
    assert not (repo / ".git" / "commondir").exists()
    assert git(repo, "log", "-1", "--format=%s") == "init\n"
    lock = repo / ".git" / "index.lock"
    lock.unlink(missing_ok=True)  # git's own lock, left by the killed commit


async def test_a_cancel_ends_the_lane_and_its_placeholders(shell: AgentShell, repo: Path) -> None:
    hook(repo, "touch src/hook-started; sleep 60\n")
    task = asyncio.ensure_future(run(shell, "git commit --allow-empty -m slow"))
    for _ in range(500):
        if (repo / "src" / "hook-started").exists():
            break
        await asyncio.sleep(0.01)
    assert (repo / ".git" / "commondir").read_bytes() == b".\n"  # held while the hook runs
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not (repo / ".git" / "commondir").exists()
    result = await run(shell, "git status --short")  # the agent's shell still works
    assert result.exit_code == 0


async def test_two_sessions_take_turns_on_one_repository(shell: AgentShell, repo: Path) -> None:
    """A lane must not remove the placeholders another holds: lanes on one git dir take turns."""
    hook(repo, 'echo "start $(date +%s%N)" >> src/order; sleep 1; echo "end $(date +%s%N)" >> src/order\n')
    other = AgentShell(repo)
    try:
        first = asyncio.ensure_future(run(shell, "git commit --allow-empty -m first"))
        await asyncio.sleep(0.3)
        second = asyncio.ensure_future(run(other, "git commit --allow-empty -m second"))
        results = await asyncio.gather(first, second)
    finally:
        await other.close()
    assert all(r.exit_code == 0 for r in results), results
    marks = [line.split()[0] for line in (repo / "src" / "order").read_text().splitlines()]
    assert marks == ["start", "end", "start", "end"], marks  # never two hooks at once
    assert git(repo, "log", "-2", "--format=%s") == "second\nfirst\n"
    assert not (repo / ".git" / "commondir").exists()
