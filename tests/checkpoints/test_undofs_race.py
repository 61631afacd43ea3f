"""`undofs` against a writer that gets in between the check of a path and the write of it:
the other writer's bytes are never replaced, the path is a conflict, no temporary is left.
The race is made deterministic by writing right after `undofs` has checked the path."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from coder_ls.history import undofs
from coder_ls.history.undofs import Change, Entry, apply_undo, blob_id

MAX = 1 << 20


def _file(data: bytes) -> Entry:
    return Entry("100644", blob_id(data))


def _after_first_check(monkeypatch: pytest.MonkeyPatch, name: str, meddle: Callable[[], None]) -> None:
    """Run `meddle` once, right after the first check of `name` (the other writer's moment)."""
    real = undofs._entry_at
    done = []

    def checked(fd: int, entry_name: str, max_bytes: int) -> Entry | None:
        found = real(fd, entry_name, max_bytes)
        if entry_name == name and not done:
            done.append(True)
            meddle()
        return found

    monkeypatch.setattr(undofs, "_entry_at", checked)


def _replace(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".other")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _leftovers(root: Path) -> list[str]:
    return [p.name for p in root.rglob("*") if p.name.startswith(".")]  # temporaries are hidden


@pytest.fixture(params=["exchange", "no-renameat2"])
def exchange(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "no-renameat2":  # a system or file system without RENAME_EXCHANGE
        monkeypatch.setattr(undofs, "rename_flags", lambda fd, src, dst, flags: False)
    elif undofs._renameat2() is None:
        pytest.skip("no renameat2 here")
    return str(request.param)


@pytest.mark.parametrize("how", ["renamed over", "written in place"])
def test_a_rewrite_after_the_check_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    if undofs._renameat2() is None:
        pytest.skip("no renameat2 here")
    target = tmp_path / "f.txt"
    target.write_bytes(b"after")

    def other_writer() -> None:
        if how == "renamed over":
            _replace(target, b"theirs")
        else:
            target.write_bytes(b"theirs")

    _after_first_check(monkeypatch, "f.txt", other_writer)
    changes = [Change("f.txt", _file(b"before"), _file(b"after"))]
    applied = apply_undo(str(tmp_path), changes, {blob_id(b"before"): b"before"}, set(), MAX)
    assert applied.conflicts == ["f.txt"] and applied.restored == []
    assert target.read_bytes() == b"theirs"
    assert _leftovers(tmp_path) == []


def test_without_renameat2_the_check_is_repeated_before_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(undofs, "rename_flags", lambda fd, src, dst, flags: False)
    target = tmp_path / "f.txt"
    target.write_bytes(b"after")
    _after_first_check(monkeypatch, "f.txt", lambda: _replace(target, b"theirs"))
    changes = [Change("f.txt", _file(b"before"), _file(b"after"))]
    applied = apply_undo(str(tmp_path), changes, {blob_id(b"before"): b"before"}, set(), MAX)
    assert applied.conflicts == ["f.txt"] and target.read_bytes() == b"theirs"
    assert _leftovers(tmp_path) == []


def test_a_file_rewritten_before_its_removal_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exchange: str
) -> None:
    (tmp_path / "d").mkdir()
    target = tmp_path / "d" / "new.txt"
    target.write_bytes(b"made by the submission")
    _after_first_check(monkeypatch, "new.txt", lambda: _replace(target, b"theirs"))
    changes = [Change("d/new.txt", None, _file(b"made by the submission"))]
    applied = apply_undo(str(tmp_path), changes, {}, set(), MAX)
    assert applied.conflicts == ["d/new.txt"] and applied.removed == []
    assert target.read_bytes() == b"theirs"
    assert _leftovers(tmp_path) == []


def test_a_file_created_before_its_restore_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exchange: str
) -> None:
    target = tmp_path / "gone.txt"  # the submission deleted it; someone creates it again
    _after_first_check(monkeypatch, "gone.txt", lambda: target.write_bytes(b"theirs"))
    changes = [Change("gone.txt", _file(b"before"), None)]
    applied = apply_undo(str(tmp_path), changes, {blob_id(b"before"): b"before"}, set(), MAX)
    assert applied.conflicts == ["gone.txt"] and applied.restored == []
    assert target.read_bytes() == b"theirs"
    assert _leftovers(tmp_path) == []


def test_nothing_racing_everything_is_reverted(tmp_path: Path, exchange: str) -> None:
    (tmp_path / "m.txt").write_bytes(b"after")
    (tmp_path / "n.txt").write_bytes(b"new")
    (tmp_path / "x.sh").write_bytes(b"same")
    changes = [
        Change("m.txt", _file(b"before"), _file(b"after")),
        Change("n.txt", None, _file(b"new")),
        Change("x.sh", Entry("100755", blob_id(b"same")), _file(b"same")),
        Change("back.txt", _file(b"before"), None),
    ]
    applied = apply_undo(str(tmp_path), changes, {blob_id(b"before"): b"before", blob_id(b"same"): b"same"}, set(), MAX)
    assert (applied.restored, applied.removed, applied.conflicts) == (["back.txt", "m.txt", "x.sh"], ["n.txt"], [])
    assert (tmp_path / "m.txt").read_bytes() == b"before" and (tmp_path / "back.txt").read_bytes() == b"before"
    assert not (tmp_path / "n.txt").exists() and os.access(tmp_path / "x.sh", os.X_OK)
    assert _leftovers(tmp_path) == []
