"""`isolation.worktrees` on real git: a worktree holds what the user sees (uncommitted and
untracked work, not ignored files), lives in the state directory, comes back as a binary
patch, and a hostile repository config (fsmonitor, hooks, filter and diff drivers, pager)
runs nothing while it is made, read back and removed."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest
from security.test_git_hostile_config import FILES, arm, payload, prove_armed

from coder_ls.isolation import worktrees


def git(cwd: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    return out.stdout


def init(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q")
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    return root


def exists(path: Path) -> bool:
    return os.path.lexists(path)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}


def test_a_worktree_starts_from_what_the_user_sees_and_returns_a_patch(tmp_path, env):
    root = init(tmp_path / "ws", {"a.txt": "a\n", "b.txt": "b\n", "sub/c.txt": "c\n", ".gitignore": "*.log\n"})
    (root / "a.txt").write_text("a, uncommitted\n")
    git(root, "rm", "-q", "b.txt")
    (root / "u.txt").write_text("untracked\n")
    (root / "x.log").write_text("ignored\n")

    async def go() -> None:
        wt = await worktrees.create(root, "step", env)
        here = Path(wt.root)
        assert here.is_relative_to(tmp_path / "state" / "coder" / "worktrees")
        assert (here / "a.txt").read_text() == "a, uncommitted\n" and not (here / "b.txt").exists()
        assert (here / "u.txt").read_text() == "untracked\n" and not (here / "x.log").exists()
        assert await worktrees.patch(wt) == b""  # the user's work is the base, not the step's change
        (here / "sub" / "c.txt").write_text("c changed\n")
        (here / "bin").write_bytes(b"\x00\xff")
        (here / "y.log").write_text("ignored: never comes back\n")
        patch = await worktrees.patch(wt)
        assert b"+c changed" in patch and b"GIT binary patch" in patch and b"y.log" not in patch
        assert b"a.txt" not in patch and b"u.txt" not in patch
        worktrees.keep(wt, "the step failed")
        [kept] = worktrees.kept(root, env)
        assert kept.worktree.id == wt.id and "drop" in worktrees.describe(kept)
        assert [k.worktree.id for k in await worktrees.drop(root, wt.id, env)] == [wt.id]
        assert not exists(here) and worktrees.kept(root, env) == []
        assert git(root, "worktree", "list", "--porcelain").count("worktree ") == 1

    asyncio.run(go())


def test_a_sub_folder_workspace_gets_the_same_sub_folder(tmp_path, env):
    top = init(tmp_path / "repo", {"pkg/m.py": "x = 1\n", "other.txt": "o\n"})

    async def go() -> None:
        wt = await worktrees.create(top / "pkg", "step", env)
        assert Path(wt.root) == Path(wt.path) / "pkg"
        (Path(wt.root) / "m.py").write_text("x = 2\n")
        (Path(wt.path) / "other.txt").write_text("outside the workspace\n")
        patch = await worktrees.patch(wt)
        assert b"diff --git a/m.py b/m.py" in patch and b"other.txt" not in patch
        await worktrees.remove(wt)

    asyncio.run(go())


def test_outside_git_there_is_no_worktree(tmp_path, env):
    (tmp_path / "plain").mkdir()
    with pytest.raises(worktrees.NotIsolated, match="not in a git repository"):
        asyncio.run(worktrees.create(tmp_path / "plain", "step", env))
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    with pytest.raises(worktrees.NotIsolated, match="no commit yet"):
        asyncio.run(worktrees.create(empty, "step", env))


@pytest.mark.parametrize("via_include", [False, True], ids=["config", "included-file"])
def test_a_hostile_repository_config_runs_nothing(tmp_path, env, via_include):
    root = init(tmp_path / "ws", FILES)
    script, marker = payload(tmp_path)
    arm(root, script, via_include=via_include)
    (root / "a.txt").write_text("changed\n")
    (root / "new.txt").write_text("untracked\n")
    os.utime(root / "a.txt", (978307200, 978307200))
    prove_armed(root, marker)

    async def go() -> None:
        wt = await worktrees.create(root, "step", env)
        (Path(wt.root) / "a.txt").write_text("the step's\n")
        (Path(wt.root) / "b.py").write_text("x = 3\n")
        patch = await worktrees.patch(wt)
        assert b"+the step's" in patch and b"+x = 3" in patch
        await worktrees.remove(wt)

    asyncio.run(go())
    assert not marker.exists(), marker.read_text()


def test_a_running_step_is_not_listed_and_one_whose_server_died_is(tmp_path, env):
    root = init(tmp_path / "ws", {"a.txt": "a\n"})
    proc = subprocess.Popen(["true"], stdin=subprocess.DEVNULL)
    proc.wait()  # a pid that has exited

    async def go() -> None:
        wt = await worktrees.create(root, "step", env)
        assert worktrees.kept(root, env) == []  # this server runs it
        note = Path(wt.path).with_suffix(".json")
        note.write_bytes(note.read_bytes().replace(str(os.getpid()).encode(), str(proc.pid).encode()))
        [kept] = worktrees.kept(root, env)
        assert kept.reason == "its server stopped while the step ran"
        await worktrees.drop(root, "--all", env)
        assert worktrees.kept(root, env) == [] and not exists(Path(wt.path))

    asyncio.run(go())
