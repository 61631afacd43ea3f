"""The file watcher behind the snapshots: what it reports, its barrier, and when it gives up."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from ckpt_helpers import write

from coder_ls.history import checkpoints as ck
from coder_ls.history import watcher as wmod
from coder_ls.history.checkpoints import Checkpoints
from coder_ls.history.watcher import TreeWatcher, ignored_folder_names


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    write(root, "a.txt", "a\n")
    write(root, "src/m.py", "m\n")
    write(root, "node_modules/dep/i.js", "x\n")
    write(root, ".git/HEAD", "ref\n")
    return root


def started(root: Path, skip=lambda rel: rel in ("node_modules", ".git", ".coder"), skip_new=None) -> TreeWatcher:
    w = TreeWatcher(root, root / ".coder" / "watch", skip, skip_new)
    assert w.start()
    return w


def settle(w: TreeWatcher) -> set[str] | None:
    assert w.barrier(2.0)
    return w.take()


def test_reports_changes_after_a_barrier(tree: Path) -> None:
    w = started(tree)
    try:
        assert settle(w) == set()
        write(tree, "a.txt", "changed\n")
        (tree / "src" / "m.py").unlink()
        write(tree, "node_modules/dep/i.js", "ignored\n")  # not watched
        write(tree, ".git/HEAD", "other\n")
        assert settle(w) == {"a.txt", "src/m.py"}
        assert settle(w) == set()
    finally:
        w.close()


def test_new_folders_are_reported_and_watched(tree: Path) -> None:
    w = started(tree, skip_new=lambda rel: rel.rsplit("/", 1)[-1] == "target")
    try:
        write(tree, "new/a/b/c.txt", "c\n")
        write(tree, "target/debug/out", "o\n")
        seen = settle(w)
        assert seen is not None and {"new", "target"} <= seen  # c.txt too if its watch came first
        assert all(p in ("new", "target") or p.startswith("new/") for p in seen)
        write(tree, "new/a/b/c.txt", "again\n")  # inside a folder that appeared: watched now
        write(tree, "target/debug/out", "skipped\n")  # a new ignored-name folder: not watched
        assert settle(w) == {"new/a/b/c.txt"}
        os.rename(tree / "new", tree / "moved")
        assert settle(w) == {"new", "moved"}
        write(tree, "moved/a/b/c.txt", "after the move\n")
        assert settle(w) == {"moved/a/b/c.txt"}
    finally:
        w.close()


def test_untrusted_after_an_overflow_and_broken_when_closed(tree: Path) -> None:
    w = started(tree)
    try:
        w._handle(wmod._EVENT.pack(-1, wmod.IN_Q_OVERFLOW, 0, 0))
        assert w.take() is None  # the caller scans once
        assert settle(w) == set()  # then trusts the watcher again
    finally:
        w.close()
    assert w.barrier(0.2) is False and w.take() is None


def test_ignored_folder_names(tmp_path: Path) -> None:
    gi = write(tmp_path, ".gitignore", "# c\nnode_modules/\ntarget\n/dist\n*.log\nbuild/out\n")
    assert ignored_folder_names(gi) == {"node_modules", "target"}
    gi.write_text("node_modules/\n!node_modules/keep\n")
    assert ignored_folder_names(gi) == frozenset()
    assert ignored_folder_names(tmp_path / "missing") == frozenset()


async def test_checkpoints_scan_when_inotify_is_unavailable(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.rmtree(tree / ".git")
    monkeypatch.setattr(wmod, "_libc", lambda: None)
    cp = Checkpoints(tree)
    before = await cp.snapshot("s1")
    assert cp.work.watcher is not None and cp.work.watcher.broken
    write(tree, "a.txt", "changed\n")
    assert await cp.finish("s1", before) == ["a.txt"]
    start = ck.GIT_CALLS
    assert await cp.finish("s2", await cp.snapshot("s2")) == []
    assert ck.GIT_CALLS - start == 2  # the scan, before and after
    outcome = await cp.undo_last()
    assert outcome is not None and (tree / "a.txt").read_text() == "a\n"


async def test_checkpoints_recover_after_an_overflow(tree: Path) -> None:
    shutil.rmtree(tree / ".git")
    cp = Checkpoints(tree)
    await cp.snapshot("warm")
    await cp.snapshot("warm2")
    assert cp.work.watcher is not None and not cp.work.watcher.broken
    write(tree, "a.txt", "missed\n")
    assert await cp.snapshot("x")  # seen by the watcher
    cp.work.watcher._handle(wmod._EVENT.pack(-1, wmod.IN_Q_OVERFLOW, 0, 0))
    before = await cp.snapshot("s1")  # scans
    write(tree, "src/m.py", "agent\n")
    assert await cp.finish("s1", before) == ["src/m.py"]
    outcome = await cp.undo_last()
    assert outcome is not None and outcome.restored == ["src/m.py"]
    assert (tree / "a.txt").read_text() == "missed\n"


async def test_seeded_first_snapshot_equals_a_hashed_one(repo: Path, tmp_path: Path) -> None:
    """Seeding from the user's index gives the same tree as hashing every file, and copies no
    object the user's repository already has."""
    write(repo, "untracked.txt", "u\n")
    write(repo, "a.txt", "unstaged\n")
    seeded = Checkpoints(repo)
    tree = await seeded.snapshot("s1")
    assert (seeded.git_dir / "objects" / "info" / "alternates").read_text().strip() == str(repo / ".git" / "objects")
    plain = tmp_path / "copy"
    shutil.copytree(repo, plain, ignore=shutil.ignore_patterns(".git", ".coder"))
    hashed = Checkpoints(plain)
    assert await hashed.snapshot("s1") == tree
    loose = [p for p in (seeded.git_dir / "objects").glob("??/*")]
    assert len(loose) <= 6  # the two changed blobs and the trees, not the committed files


async def test_a_changed_gitignore_rewatches_what_it_no_longer_ignores(tree: Path) -> None:
    shutil.rmtree(tree / ".git")
    write(tree, ".gitignore", "gen/\n")
    write(tree, "gen/out.txt", "generated\n")
    cp = Checkpoints(tree)
    await cp.snapshot("warm")
    await cp.snapshot("warm2")
    write(tree, ".gitignore", "node_modules/\n")  # gen/ counts from now on
    before = await cp.snapshot("s1")
    write(tree, "gen/out.txt", "changed by the agent\n")
    assert await cp.finish("s1", before) == ["gen/out.txt"]
    await cp.undo_last()
    assert (tree / "gen" / "out.txt").read_text() == "generated\n"
