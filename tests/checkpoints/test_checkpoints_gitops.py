"""`/diff` and `/undo --all` against real git repositories."""

from __future__ import annotations

from pathlib import Path

import pytest
from ckpt_helpers import git, write

from coder_ls.history.checkpoints import Checkpoints, restore_to_head
from coder_ls.history.gitops import GitError, NotAGitRepo, diff, is_git_repo


async def test_is_git_repo(repo: Path, plain: Path) -> None:
    assert await is_git_repo(repo)
    assert await is_git_repo(repo / "src")
    assert not await is_git_repo(plain)
    assert not await is_git_repo(plain / "missing")


async def test_diff_has_stat_and_patch(repo: Path) -> None:
    write(repo, "a.txt", "a3\n")
    write(repo, "untracked.txt", "u\n")
    result = await diff(repo)
    assert result.error is None
    assert "a.txt" in result.stat and "src/m.py" in result.stat  # unstaged and staged
    assert "untracked.txt" in result.stat
    assert "-a2" in result.diff and "+a3" in result.diff
    assert "+print('staged')" in result.diff
    assert result.files == ["a.txt", "src/m.py"]
    assert result.untracked == ["untracked.txt"]
    assert result.text.startswith(result.stat) and f"{result.stat}\n\ndiff --git" in result.text
    assert "debug.log" not in result.text  # ignored
    data = result.to_data()
    assert data.files == ["a.txt", "src/m.py", "untracked.txt"]


async def test_diff_clean_repo(tmp_path: Path) -> None:
    root = tmp_path / "clean"
    root.mkdir()
    git(root, "init", "-q")
    write(root, "a.txt", "a\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-q", "-m", "init")
    result = await diff(root)
    assert result.error is None and result.text == "No changes." and result.files == []


async def test_diff_without_commits(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q")
    write(root, "staged.txt", "s\n")
    git(root, "add", "staged.txt")
    write(root, "loose.txt", "l\n")
    result = await diff(root)
    assert result.error is None
    assert result.files == ["staged.txt"]
    assert "+s" in result.diff and "loose.txt" in result.stat


async def test_diff_not_a_repo(plain: Path) -> None:
    result = await diff(plain)
    assert result.error is not None and "Not a git repository" in result.error


async def test_restore_to_head(repo: Path) -> None:
    write(repo, ".coder/config.json", '{"model": "x"}\n')
    write(repo, "a.txt", "dirty\n")
    (repo / "b.txt").unlink()
    write(repo, "new/file.txt", "untracked\n")
    write(repo, "added.txt", "staged new\n")
    git(repo, "add", "added.txt")
    cp = Checkpoints(repo)
    await cp.snapshot("s0")  # creates .coder/checkpoints
    preview = await cp.undo_all_preview()
    assert preview == ["a.txt", "added.txt", "b.txt", "new/file.txt", "src/m.py"]

    outcome = await restore_to_head(repo)
    assert outcome.restored == ["a.txt", "b.txt", "src/m.py"]
    assert outcome.removed == ["added.txt", "new/file.txt"]
    assert (repo / "a.txt").read_text() == "a2\n"
    assert (repo / "b.txt").read_text() == "b1\n"
    assert (repo / "src/m.py").read_text() == "print('m')\n"
    assert not (repo / "new").exists() and not (repo / "added.txt").exists()
    assert (repo / "build/keep.o").exists() and (repo / "debug.log").exists()
    assert (repo / ".coder/config.json").exists()
    assert (repo / ".coder/checkpoints/git/HEAD").exists()
    assert git(repo, "status", "--porcelain") == "?? .coder/\n"  # config.json is meant for git
    assert git(repo, "status", "--porcelain", "--", ".", ":(exclude).coder") == ""
    assert git(repo, "stash", "list").strip() != ""
    assert await cp.undo_all_preview() == []


async def test_restore_to_head_errors(plain: Path, tmp_path: Path) -> None:
    with pytest.raises(NotAGitRepo):
        await restore_to_head(plain)
    with pytest.raises(NotAGitRepo):
        await Checkpoints(plain).undo_all_preview()
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q")
    with pytest.raises(GitError):
        await restore_to_head(fresh)
