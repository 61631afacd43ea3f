"""What a git lane run holds on the host (`guard/gitlane.py` `prepare`/`release`): the pins,
the placeholders for missing internals and what happens to them after the run, on real
repositories. And the claim the `commondir` placeholder rests on: with a `commondir` that
says `.`, git behaves as without one."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from coder_ls.guard import gitlane

ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
    "GIT_AUTHOR_DATE": "2020-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z",
    "GIT_EDITOR": ":",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, env=ENV, capture_output=True, text=True)
    return done.stdout + done.stderr


def make_repo(root: Path) -> Path:
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True, env=ENV)
    (root / "a.txt").write_text("1\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-qm", "one")
    return root


def pins(held: gitlane.Held) -> list[str]:
    args = held.args
    return [args[i + 1] for i in range(len(args)) if args[i] == "--ro-bind"]


def test_git_dir_writable_first_then_what_git_trusts_pinned(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    git(root, "worktree", "add", "-q", str(tmp_path / "wt"))
    sub = root / ".git" / "modules" / "lib" / "inner"
    sub.mkdir(parents=True)
    (sub / "HEAD").write_text("ref: refs/heads/main\n")
    (sub / "config").write_text("[core]\n")
    (sub / "hooks").mkdir()
    git_dir = root / ".git"
    held = gitlane.prepare(str(root), str(git_dir), ENV)
    try:
        assert held.args[:3] == ["--bind", str(git_dir), str(git_dir)]
        pinned = set(pins(held))
        for name in ("config", "hooks", "info"):
            assert str(git_dir / name) in pinned
        assert str(git_dir / "worktrees" / "wt" / "commondir") in pinned
        assert {str(sub / "config"), str(sub / "hooks")} <= pinned
        assert str(git_dir / "commondir") not in pinned  # no hook, no configured program: not held
    finally:
        assert gitlane.release(held) == []


def test_missing_hooks_and_info_are_held_by_empty_folders_removed_after(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    for name in ("hooks", "info"):
        subprocess.run(["rm", "-rf", str(root / ".git" / name)], check=True)
    held = gitlane.prepare(str(root), str(root / ".git"), ENV)
    assert (root / ".git" / "hooks").is_dir() and (root / ".git" / "info").is_dir()
    assert {str(root / ".git" / "hooks"), str(root / ".git" / "info")} <= set(pins(held))
    assert gitlane.release(held) == []
    assert not (root / ".git" / "hooks").exists() and not (root / ".git" / "info").exists()


@pytest.mark.parametrize("how", ["hook", "hooksPath", "fsmonitor", "filter"])
def test_a_missing_commondir_is_held_when_a_hook_or_program_could_run(tmp_path: Path, how: str) -> None:
    root = make_repo(tmp_path / "ws")
    if how == "hook":
        hook = root / ".git" / "hooks" / "pre-commit"
        hook.write_text("#!/bin/sh\n")
        hook.chmod(0o755)
    elif how == "hooksPath":
        git(root, "config", "core.hooksPath", ".githooks")
    elif how == "fsmonitor":
        git(root, "config", "core.fsmonitor", "./tools/fsmonitor")
    else:
        git(root, "config", "filter.lfs.clean", "git-lfs clean -- %f")
    common = root / ".git" / "commondir"
    held = gitlane.prepare(str(root), str(root / ".git"), ENV)
    assert common.read_bytes() == b".\n" and str(common) in pins(held)
    assert gitlane.release(held) == []
    assert not common.exists()


def test_a_sample_hook_or_fsmonitor_false_holds_nothing(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")  # git init leaves executable *.sample hooks
    assert any(p.name.endswith(".sample") for p in (root / ".git" / "hooks").iterdir())
    git(root, "config", "core.fsmonitor", "false")
    held = gitlane.prepare(str(root), str(root / ".git"), ENV)
    assert not (root / ".git" / "commondir").exists()
    gitlane.release(held)


def test_a_placeholder_left_by_a_killed_server_is_healed(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    (root / ".git" / "commondir").write_bytes(b".\n")
    held = gitlane.prepare(str(root), str(root / ".git"), ENV)
    assert not (root / ".git" / "commondir").exists()
    gitlane.release(held)


def test_what_appeared_is_quarantined_and_named(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    git_dir = root / ".git"
    held = gitlane.prepare(str(root), str(git_dir), ENV)
    (git_dir / "config.worktree").write_text("[core]\n\tfsmonitor = touch PWNED\n")
    (git_dir / "commondir").write_text("../elsewhere\n")
    (git_dir / "objects" / "info" / "alternates").write_text("/tmp/objects\n")
    (git_dir / "worktrees" / "x").mkdir(parents=True)
    (git_dir / "worktrees" / "x" / "commondir").write_text("../..\n")
    moved = gitlane.release(held)
    assert len(moved) == 4, moved
    for name in ("config.worktree", "commondir", "objects/info/alternates", "worktrees/x/commondir"):
        assert not os.path.lexists(git_dir / name)
        assert any(m.startswith(f".git/{name} -> .coder/quarantine/") for m in moved), moved
    kept = list((root / ".coder" / "quarantine").rglob("*"))
    assert not any(p.name == ".git" for p in kept)  # nothing there looks like a repository
    assert git(root, "status", "--short") == "?? .coder/\n"  # git works, and sees nothing new in .git


def test_new_exec_lines_in_a_rebase_todo_are_quarantined(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    todo = root / ".git" / "rebase-merge" / "git-rebase-todo"
    todo.parent.mkdir()
    todo.write_text("pick 1234567 one\n")
    held = gitlane.prepare(str(root), str(root / ".git"), ENV)
    todo.write_text("pick 1234567 one\nexec touch PWNED\n")
    moved = gitlane.release(held)
    assert moved and moved[0].startswith(".git/rebase-merge/git-rebase-todo -> ") and not todo.exists()


def test_a_placeholder_someone_replaced_is_quarantined_not_removed_as_ours(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\n")
    hook.chmod(0o755)
    held = gitlane.prepare(str(root), str(root / ".git"), ENV)
    common = root / ".git" / "commondir"
    common.unlink()
    common.write_text("../evil\n")
    moved = gitlane.release(held)
    assert len(moved) == 1 and moved[0].startswith(".git/commondir -> ") and not common.exists()


def test_while_the_sandbox_may_live_placeholders_stay(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    git(root, "config", "core.hooksPath", ".githooks")
    held = gitlane.prepare(str(root), str(root / ".git"), ENV)
    assert gitlane.release(held, gone=False) == []
    assert (root / ".git" / "commondir").read_bytes() == b".\n"  # healed by the next run
    gitlane.release(gitlane.prepare(str(root), str(root / ".git"), ENV))
    assert not (root / ".git" / "commondir").exists()


def everyday(root: Path, tmp_path: Path) -> list[str]:
    """The everyday commands, their output, and the repository they leave (paths made relative)."""
    wt = tmp_path / f"wts-{root.name}" / "wt"
    steps = [
        ("status",),
        ("commit", "-qam", "two"),
        ("checkout", "-qb", "feat"),
        ("switch", "-q", "main"),
        ("branch", "x"),
        ("tag", "v1"),
        ("stash", "list"),
        ("merge", "-q", "--no-edit", "feat"),
        ("rebase", "-q", "x"),
        ("reset", "-q", "--hard", "HEAD"),
        ("worktree", "add", "-q", str(wt)),
        ("worktree", "list", "--porcelain"),
        ("log", "--all", "--format=%H %s %D"),
        ("for-each-ref",),
        ("rev-parse", "--git-dir", "--show-toplevel"),
        ("fsck",),
    ]
    out = []
    (root / "a.txt").write_text("2\n")
    for step in steps:
        out.append(git(root, *step).replace(str(root), "ROOT").replace(str(wt), "WT"))
    (root / "a.txt").write_text("3\n")
    out.append(git(root, "stash"))
    out.append(git(root, "stash", "list"))
    out.append(git(root, "stash", "pop"))
    return out


def test_git_with_commondir_dot_behaves_as_without(tmp_path: Path) -> None:
    plain = make_repo(tmp_path / "plain")
    held = make_repo(tmp_path / "held")
    (held / ".git" / "commondir").write_bytes(gitlane.COMMONDIR_PLACEHOLDER)
    assert everyday(held, tmp_path) == everyday(plain, tmp_path)
    (held / ".git" / "commondir").unlink()
    files = [
        sorted(str(p.relative_to(r)) for p in (r / ".git").rglob("*") if "objects" not in p.parts)
        for r in (plain, held)
    ]
    assert files[0] == files[1]


def test_what_differs_with_commondir_dot_names_the_same_places(tmp_path: Path) -> None:
    """Measured differences: git prints the common dir, and paths in it, absolute; and
    `count-objects -v` takes the git dir's own entries for a linked worktree's garbage."""
    root = make_repo(tmp_path / "ws")
    before = git(root, "rev-parse", "--git-common-dir", "--git-path", "hooks").split()
    (root / ".git" / "commondir").write_bytes(gitlane.COMMONDIR_PLACEHOLDER)
    during = git(root, "rev-parse", "--git-common-dir", "--git-path", "hooks").split()
    assert before == [".git", ".git/hooks"] and during == [str(root / ".git"), str(root / ".git" / "hooks")]
    assert "garbage: 0" not in git(root, "count-objects", "-v")
