"""The fast path: a submission that changes nothing costs no git process (watching) or one
`ls-files` before and one after (scanning),
and skipping `add`/`write-tree`/commits never attributes the user's own edits to a submission."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from ckpt_helpers import user_git_state, write

from coder_ls.history import checkpoints as ck
from coder_ls.history.checkpoints import Checkpoints

# What a submission that changes nothing costs in git processes: with the file watcher, none
# (the barrier shows nothing changed); scanning, one `ls-files` before and one after.
NOOP_CALLS = {True: 0, False: 2}


@pytest.fixture(autouse=True, params=[True, False], ids=["watch", "scan"])
def watching(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    monkeypatch.setattr(ck, "WATCH", request.param)
    return bool(request.param)


async def submit(cp: Checkpoints, sid: str, *edits: tuple[str, str | None]) -> list[str]:
    """One submission: snapshot, the given edits (None deletes), finish."""
    before = await cp.snapshot(sid)
    for rel, text in edits:
        if text is None:
            (cp.root / rel).unlink()
        else:
            write(cp.root, rel, text)
    return await cp.finish(sid, before)


async def warm(cp: Checkpoints) -> None:
    """Reach the steady state: the private index up to date with the work tree."""
    for i in range(2):
        assert await submit(cp, f"warm{i}") == []


async def git_calls_of_noop(cp: Checkpoints, sid: str) -> int:
    start = ck.GIT_CALLS
    assert await submit(cp, sid) == []
    return ck.GIT_CALLS - start


def private_git(cp: Checkpoints, *args: str) -> str:
    env = {**os.environ, "GIT_DIR": str(cp.git_dir)}
    return subprocess.run(["git", *args], env=env, capture_output=True, text=True, check=True).stdout


async def test_noop_submission_cost(repo: Path, watching: bool) -> None:
    cp = Checkpoints(repo)
    await warm(cp)
    for i in range(3):
        assert await git_calls_of_noop(cp, f"noop{i}") == NOOP_CALLS[watching]
    # after a changing submission too
    assert await submit(cp, "s1", ("a.txt", "changed\n")) == ["a.txt"]
    assert await git_calls_of_noop(cp, "noop-after-change") == NOOP_CALLS[watching]


async def test_noop_submission_cost_without_git(plain: Path, watching: bool) -> None:
    cp = Checkpoints(plain)
    await warm(cp)
    assert await git_calls_of_noop(cp, "noop") == NOOP_CALLS[watching]


async def test_ignored_files_keep_the_fast_path(repo: Path, watching: bool) -> None:
    cp = Checkpoints(repo)
    await warm(cp)
    before = await cp.snapshot("s1")
    write(repo, "build/out.o", "obj\n")
    write(repo, "x.log", "log\n")
    start = ck.GIT_CALLS
    assert await cp.finish("s1", before) == []
    assert ck.GIT_CALLS - start == 1  # watching: an `ls-files` of x.log (build/ is not watched)
    assert cp.pending() == []


async def test_noop_leaves_no_record_and_no_commit(repo: Path) -> None:
    cp = Checkpoints(repo)
    assert await submit(cp, "s1", ("a.txt", "one\n")) == ["a.txt"]
    tip = private_git(cp, "rev-parse", "refs/heads/snapshots")
    for i in range(3):
        assert await submit(cp, f"noop{i}") == []
    assert [r.submission_id for r in cp.pending()] == ["s1"]
    assert private_git(cp, "rev-parse", "refs/heads/snapshots") == tip


async def test_user_edit_between_submissions_is_not_undone(repo: Path) -> None:
    cp = Checkpoints(repo)
    await warm(cp)
    write(repo, "a.txt", "user edit\n")  # between submissions, in the steady state
    assert await submit(cp, "s2", ("b.txt", "agent\n")) == ["b.txt"]
    outcome = await cp.undo_last()
    assert outcome is not None and outcome.submission_id == "s2"
    assert outcome.restored == ["b.txt"] and outcome.removed == []
    assert (repo / "a.txt").read_text() == "user edit\n"
    assert (repo / "b.txt").read_text() == "b1\n"


async def test_user_edit_of_the_same_file_is_kept_as_the_before_state(repo: Path) -> None:
    cp = Checkpoints(repo)
    assert await submit(cp, "s1", ("a.txt", "agent one\n")) == ["a.txt"]
    write(repo, "a.txt", "user\n")
    assert await submit(cp, "s2", ("a.txt", "agent two\n")) == ["a.txt"]
    await cp.undo_last()
    assert (repo / "a.txt").read_text() == "user\n"  # not "agent one\n"
    outcome = await cp.undo_last()
    assert outcome is not None and outcome.conflicts == ["a.txt"]  # it holds the user's text, not s1's
    assert (repo / "a.txt").read_text() == "user\n"


async def test_new_untracked_file_between_submissions_is_not_removed(repo: Path) -> None:
    cp = Checkpoints(repo)
    await warm(cp)
    write(repo, "notes/user.txt", "mine\n")
    assert await submit(cp, "s2", ("agent.txt", "agent\n")) == ["agent.txt"]
    outcome = await cp.undo_last()
    assert outcome is not None and outcome.removed == ["agent.txt"]
    assert (repo / "notes/user.txt").read_text() == "mine\n"
    assert not (repo / "agent.txt").exists()


async def test_user_deletion_between_submissions_is_not_restored(repo: Path) -> None:
    cp = Checkpoints(repo)
    await warm(cp)
    (repo / "b.txt").unlink()
    assert await submit(cp, "s2", ("a.txt", "agent\n")) == ["a.txt"]
    outcome = await cp.undo_last()
    assert outcome is not None and outcome.restored == ["a.txt"]
    assert not (repo / "b.txt").exists()


async def test_same_size_edit_right_after_a_snapshot_is_seen(plain: Path) -> None:
    """Racily clean entries: same size, same mtime second as the index -> content compared."""
    cp = Checkpoints(plain)
    await warm(cp)
    before = await cp.snapshot("s1")
    write(plain, "a.txt", "zz\n")  # "a1\n" -> "zz\n": same size, immediately
    assert await cp.finish("s1", before) == ["a.txt"]
    await cp.undo_last()
    assert (plain / "a.txt").read_text() == "a1\n"


async def test_touch_only_is_not_a_change(plain: Path, watching: bool) -> None:
    cp = Checkpoints(plain)
    await warm(cp)
    before = await cp.snapshot("s1")
    os.utime(plain / "a.txt", (1, 1))
    assert await cp.finish("s1", before) == []
    assert await git_calls_of_noop(cp, "after-touch") == NOOP_CALLS[watching]  # the stat cache was refreshed


async def test_changing_submission_commits_are_reachable(repo: Path) -> None:
    cp = Checkpoints(repo)
    await warm(cp)
    await submit(cp, "s1", ("a.txt", "one\n"))
    write(repo, "b.txt", "user\n")
    await submit(cp, "s2", ("a.txt", "two\n"))
    reachable = set(private_git(cp, "rev-list", "refs/heads/snapshots").split())
    for rec in cp.pending():
        assert rec.before in reachable and rec.after in reachable
        assert private_git(cp, "cat-file", "-t", rec.before).strip() == "commit"


async def test_gc_runs_rarely(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ck, "GC_EVERY", 3)
    real = ck.run_git
    gcs: list[int] = []

    async def counting(args: list[str], **kw: object) -> ck.GitRun:
        if "gc" in args:
            gcs.append(1)
        return await real(args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(ck, "run_git", counting)
    cp = Checkpoints(repo)
    for i in range(7):
        assert await submit(cp, f"s{i}", ("a.txt", f"v{i}\n")) == ["a.txt"]
    assert len(gcs) == 2  # after the 3rd and the 6th record


async def test_fast_path_survives_restart(repo: Path, watching: bool) -> None:
    cp = Checkpoints(repo)
    await warm(cp)
    assert await submit(cp, "s1", ("a.txt", "one\n")) == ["a.txt"]
    write(repo, "user.txt", "user\n")  # while the server is down
    again = Checkpoints(repo)
    assert await submit(again, "s2", ("b.txt", "two\n")) == ["b.txt"]
    assert await git_calls_of_noop(again, "noop") == NOOP_CALLS[watching]
    outcome = await again.undo_last()
    assert outcome is not None and outcome.submission_id == "s2"
    assert (repo / "user.txt").exists() and (repo / "b.txt").read_text() == "b1\n"
    outcome = await again.undo_last()
    assert outcome is not None and outcome.submission_id == "s1"
    assert (repo / "a.txt").read_text() == "a2\n" and (repo / "user.txt").exists()


async def test_index_rewritten_behind_our_back_falls_back(plain: Path) -> None:
    cp = Checkpoints(plain)
    await warm(cp)
    cp.index.unlink()  # e.g. someone cleaning .coder/checkpoints by hand
    assert await submit(cp, "s1", ("a.txt", "changed\n")) == ["a.txt"]
    await cp.undo_last()
    assert (plain / "a.txt").read_text() == "a1\n"


async def test_state_dir_deleted_in_steady_state(plain: Path) -> None:
    cp = Checkpoints(plain)
    await warm(cp)
    shutil.rmtree(plain / ".coder")
    write(plain, "b.txt", "user\n")
    assert await submit(cp, "s1", ("a.txt", "changed\n")) == ["a.txt"]
    await cp.undo_last()
    assert (plain / "a.txt").read_text() == "a1\n" and (plain / "b.txt").read_text() == "user\n"


async def test_known_large_files_keep_the_fast_path(
    plain: Path, monkeypatch: pytest.MonkeyPatch, watching: bool
) -> None:
    monkeypatch.setattr(ck, "MAX_FILE_BYTES", 1000)
    (plain / "big.bin").write_bytes(b"x" * 5000)
    cp = Checkpoints(plain)
    await warm(cp)
    assert await git_calls_of_noop(cp, "noop") == NOOP_CALLS[watching]
    (plain / "big.bin").write_bytes(b"y" * 6000)  # still too large: still ignored
    assert await submit(cp, "s1") == []
    (plain / "big.bin").write_bytes(b"small\n")  # now it is snapshotted again
    assert await submit(cp, "s2", ("big.bin", "agent\n")) == ["big.bin"]
    await cp.undo_last()
    assert (plain / "big.bin").read_text() == "small\n"


async def test_user_git_untouched_by_the_fast_path(repo: Path) -> None:
    state = user_git_state(repo)
    cp = Checkpoints(repo)
    await warm(cp)
    for i in range(3):
        await submit(cp, f"noop{i}")
    assert user_git_state(repo) == state
