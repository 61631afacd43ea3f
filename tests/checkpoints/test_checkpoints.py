"""Checkpoints with real git: snapshot, finish, undo, persistence, isolation from the user's git."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from ckpt_helpers import git, user_git_state, write

from coder_ls.history import checkpoints as ck
from coder_ls.history.checkpoints import Checkpoints


async def shell(root: Path, script: str) -> None:
    proc = await asyncio.create_subprocess_exec("bash", "-c", script, cwd=root)
    assert await proc.wait() == 0


def snapshot_files(cp: Checkpoints, commit: str) -> list[str]:
    env = {**os.environ, "GIT_DIR": str(cp.git_dir)}
    out = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", commit], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.split()


async def test_undo_modify_create_delete(repo: Path) -> None:
    cp = Checkpoints(repo)
    before = await cp.snapshot("s1")
    write(repo, "a.txt", "changed\n")
    (repo / "b.txt").unlink()
    write(repo, "new/dir/c.txt", "created\n")
    changed = await cp.finish("s1", before)
    assert changed == ["a.txt", "b.txt", "new/dir/c.txt"]

    outcome = await cp.undo_last()
    assert outcome is not None
    assert outcome.submission_id == "s1"
    assert outcome.restored == ["a.txt", "b.txt"]
    assert outcome.removed == ["new/dir/c.txt"]
    assert outcome.conflicts == []
    assert (repo / "a.txt").read_text() == "a2\n"
    assert (repo / "b.txt").read_text() == "b1\n"
    assert not (repo / "new").exists()
    assert await cp.undo_last() is None


async def test_undo_changes_made_by_a_shell(repo: Path) -> None:
    cp = Checkpoints(repo)
    before = await cp.snapshot("sh")
    await shell(repo, "echo x > a.txt; rm b.txt; mkdir d && echo y > d/c.txt")
    assert await cp.finish("sh", before) == ["a.txt", "b.txt", "d/c.txt"]
    outcome = await cp.undo_last()
    assert outcome is not None
    assert (repo / "a.txt").read_text() == "a2\n"
    assert (repo / "b.txt").read_text() == "b1\n"
    assert not (repo / "d").exists()


async def test_user_git_is_untouched(repo: Path) -> None:
    state = user_git_state(repo)
    cp = Checkpoints(repo)
    before = await cp.snapshot("s1")
    assert user_git_state(repo) == state
    await shell(repo, "echo x > a.txt; rm b.txt; mkdir d && echo y > d/c.txt")
    await cp.finish("s1", before)
    changed_state = user_git_state(repo)
    assert changed_state["index"] == state["index"]
    assert changed_state["log"] == state["log"]
    assert changed_state["stash"] == state["stash"]
    assert changed_state["refs"] == state["refs"]
    await cp.undo_last()
    assert user_git_state(repo) == state
    # the private repo never shows up in the user's status
    assert ".coder" not in git(repo, "status", "--porcelain", "--untracked-files=all")


async def test_ignored_files_are_neither_snapshotted_nor_removed(repo: Path) -> None:
    cp = Checkpoints(repo)
    before = await cp.snapshot("s1")
    files = snapshot_files(cp, before)
    assert "a.txt" in files and "src/m.py" in files and ".gitignore" in files
    assert not any(f.startswith(("build/", ".coder/", ".git/")) or f.endswith(".log") for f in files)
    write(repo, "build/new.o", "new object\n")
    write(repo, "more.log", "more\n")
    write(repo, "a.txt", "changed\n")
    assert await cp.finish("s1", before) == ["a.txt"]
    await cp.undo_last()
    assert (repo / "build/new.o").exists() and (repo / "more.log").exists()
    assert (repo / "build/keep.o").exists() and (repo / "debug.log").exists()


async def test_user_info_exclude_is_respected(repo: Path) -> None:
    (repo / ".git/info").mkdir(exist_ok=True)
    (repo / ".git/info/exclude").write_text("secret.txt\n")
    cp = Checkpoints(repo)
    before = await cp.snapshot("s1")
    write(repo, "secret.txt", "s\n")
    assert await cp.finish("s1", before) == []


async def test_undo_twice_goes_back_two_submissions(repo: Path) -> None:
    cp = Checkpoints(repo)
    b1 = await cp.snapshot("s1")
    write(repo, "a.txt", "one\n")
    await cp.finish("s1", b1)
    b2 = await cp.snapshot("s2")
    write(repo, "a.txt", "two\n")
    write(repo, "z.txt", "z\n")
    await cp.finish("s2", b2)

    first = await cp.undo_last()
    assert first is not None and first.submission_id == "s2"
    assert (repo / "a.txt").read_text() == "one\n"
    assert not (repo / "z.txt").exists()
    second = await cp.undo_last()
    assert second is not None and second.submission_id == "s1"
    assert (repo / "a.txt").read_text() == "a2\n"
    assert await cp.undo_last() is None


async def test_submission_without_changes_leaves_no_record(repo: Path) -> None:
    cp = Checkpoints(repo)
    b1 = await cp.snapshot("s1")
    write(repo, "a.txt", "one\n")
    await cp.finish("s1", b1)
    b2 = await cp.snapshot("s2")
    await shell(repo, "cat a.txt > /dev/null")
    assert await cp.finish("s2", b2) == []
    assert [r.submission_id for r in cp.pending()] == ["s1"]
    outcome = await cp.undo_last()
    assert outcome is not None and outcome.submission_id == "s1"


async def test_undo_survives_restart(repo: Path) -> None:
    cp = Checkpoints(repo)
    before = await cp.snapshot("s1")
    write(repo, "a.txt", "changed\n")
    write(repo, "fresh.txt", "fresh\n")
    await cp.finish("s1", before)
    del cp
    again = Checkpoints(repo)
    outcome = await again.undo_last()
    assert outcome is not None and outcome.submission_id == "s1"
    assert (repo / "a.txt").read_text() == "a2\n"
    assert not (repo / "fresh.txt").exists()


async def test_only_changed_paths_are_restored_and_drifted_ones_kept(repo: Path) -> None:
    cp = Checkpoints(repo)
    before = await cp.snapshot("s1")
    write(repo, "a.txt", "agent\n")
    write(repo, "b.txt", "agent\n")
    await cp.finish("s1", before)
    write(repo, "a.txt", "user edited after\n")  # same path, changed again
    write(repo, "src/m.py", "user edit elsewhere\n")  # other path
    write(repo, "notes.txt", "user file\n")
    outcome = await cp.undo_last()
    assert outcome is not None
    assert outcome.restored == ["b.txt"]
    assert outcome.conflicts == ["a.txt"]
    assert (repo / "a.txt").read_text() == "user edited after\n"
    assert (repo / "b.txt").read_text() == "b1\n"
    assert (repo / "src/m.py").read_text() == "user edit elsewhere\n"
    assert (repo / "notes.txt").exists()


async def test_non_git_workspace(plain: Path) -> None:
    cp = Checkpoints(plain)
    before = await cp.snapshot("s1")
    await shell(plain, "echo x > a.txt; rm b.txt; mkdir d && echo y > d/c.txt; echo z > out/more.txt")
    assert await cp.finish("s1", before) == ["a.txt", "b.txt", "d/c.txt"]
    outcome = await cp.undo_last()
    assert outcome is not None
    assert (plain / "a.txt").read_text() == "a1\n"
    assert (plain / "b.txt").read_text() == "b1\n"
    assert not (plain / "d").exists()
    assert (plain / "out/more.txt").exists()
    assert not (plain / ".git").exists()
    assert (plain / ".coder/.gitignore").exists()


async def test_executable_bit_and_binary_restored(plain: Path) -> None:
    script = write(plain, "run.sh", "#!/bin/sh\n")
    script.chmod(0o755)
    (plain / "blob.bin").write_bytes(bytes(range(256)) * 100)
    cp = Checkpoints(plain)
    before = await cp.snapshot("s1")
    script.chmod(0o644)
    (plain / "blob.bin").write_bytes(b"\0\1\2")
    assert await cp.finish("s1", before) == ["blob.bin", "run.sh"]
    await cp.undo_last()
    assert os.access(script, os.X_OK)
    assert (plain / "blob.bin").read_bytes() == bytes(range(256)) * 100


async def test_large_files_are_skipped(plain: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ck, "MAX_FILE_BYTES", 1000)
    (plain / "big.bin").write_bytes(b"x" * 5000)
    cp = Checkpoints(plain)
    before = await cp.snapshot("s1")
    assert "big.bin" not in snapshot_files(cp, before)
    (plain / "big.bin").write_bytes(b"y" * 6000)
    write(plain, "a.txt", "changed\n")
    assert await cp.finish("s1", before) == ["a.txt"]
    await cp.undo_last()
    assert (plain / "big.bin").read_bytes() == b"y" * 6000


async def test_file_growing_past_the_limit_is_left_alone(plain: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ck, "MAX_FILE_BYTES", 1000)
    (plain / "grows.bin").write_bytes(b"x" * 10)
    cp = Checkpoints(plain)
    before = await cp.snapshot("s1")
    assert "grows.bin" in snapshot_files(cp, before)
    (plain / "grows.bin").write_bytes(b"y" * 5000)
    write(plain, "a.txt", "changed\n")
    assert await cp.finish("s1", before) == ["a.txt"]
    await cp.undo_last()
    assert (plain / "grows.bin").read_bytes() == b"y" * 5000


async def test_bytes_are_restored_exactly_despite_gitattributes(plain: Path) -> None:
    write(plain, ".gitattributes", "* text=auto eol=lf\n")
    (plain / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    cp = Checkpoints(plain)
    before = await cp.snapshot("s1")
    (plain / "crlf.txt").write_bytes(b"changed\n")
    assert await cp.finish("s1", before) == ["crlf.txt"]
    await cp.undo_last()
    assert (plain / "crlf.txt").read_bytes() == b"one\r\ntwo\r\n"


async def test_odd_paths_and_symlinks(plain: Path) -> None:
    write(plain, "dir with space/ü ñ.txt", "old\n")
    cp = Checkpoints(plain)
    before = await cp.snapshot("s1")
    write(plain, "dir with space/ü ñ.txt", "new\n")
    (plain / "link").symlink_to("a.txt")
    write(plain, "-dash.txt", "d\n")
    changed = await cp.finish("s1", before)
    assert changed == ["-dash.txt", "dir with space/ü ñ.txt", "link"]
    outcome = await cp.undo_last()
    assert outcome is not None and sorted(outcome.removed) == ["-dash.txt", "link"]
    assert (plain / "dir with space/ü ñ.txt").read_text() == "old\n"
    assert not (plain / "link").is_symlink() and (plain / "a.txt").exists()


async def test_concurrent_calls_are_serialized(repo: Path) -> None:
    cp = Checkpoints(repo)
    ids = await asyncio.gather(*(cp.snapshot(f"s{i}") for i in range(5)))
    assert len(set(ids)) == 1  # nothing changed in between: the same tree, and no index.lock clash
    write(repo, "a.txt", "changed\n")
    results = await asyncio.gather(*(cp.finish(f"s{i}", before) for i, before in enumerate(ids)))
    assert results == [["a.txt"]] * 5


async def test_snapshot_speed_2000_files(tmp_path: Path) -> None:
    root = tmp_path / "big"
    for i in range(2000):
        write(root, f"pkg{i % 40}/mod{i}.py", f"# module {i}\n" + "x = 1\n" * 50)
    cp = Checkpoints(root)
    t0 = time.perf_counter()
    first = await cp.snapshot("s1")
    t1 = time.perf_counter()
    again = await cp.snapshot("s2")
    t2 = time.perf_counter()
    write(root, "pkg1/mod1.py", "changed\n")
    assert await cp.finish("s2", again) == ["pkg1/mod1.py"]
    t3 = time.perf_counter()
    print(f"\nsnapshot 2000 files: first {t1 - t0:.3f}s, next {t2 - t1:.3f}s, finish {t3 - t2:.3f}s")
    assert len(snapshot_files(cp, first)) == 2000
    assert t2 - t1 < 5


async def test_user_global_config_is_ignored(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hostile = tmp_path / "hostile.gitconfig"
    hostile.write_text(
        "[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = false\n[core]\n\tautocrlf = true\n"
        "[user]\n\tuseConfigOnly = true\n"
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(hostile))
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))  # a stray variable must not leak into our repo
    (repo / "crlf.txt").write_bytes(b"x\r\n")
    cp = Checkpoints(repo)
    before = await cp.snapshot("s1")
    (repo / "crlf.txt").write_bytes(b"y\n")
    assert await cp.finish("s1", before) == ["crlf.txt"]
    await cp.undo_last()
    assert (repo / "crlf.txt").read_bytes() == b"x\r\n"


async def test_recovers_when_state_dir_is_deleted(plain: Path) -> None:
    cp = Checkpoints(plain)
    await cp.snapshot("s1")
    shutil.rmtree(plain / ".coder")
    before = await cp.snapshot("s2")
    write(plain, "a.txt", "changed\n")
    assert await cp.finish("s2", before) == ["a.txt"]
    assert (await cp.undo_last()) is not None
    assert (plain / "a.txt").read_text() == "a1\n"
