"""`undofs`: every step goes through directory descriptors and never follows a link."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from coder_ls.history.undofs import SYMLINK, Change, Entry, apply_undo, blob_id, current_entry


def _root_fd(root: Path) -> int:
    return os.open(root, os.O_RDONLY | os.O_DIRECTORY)


def test_blob_id_matches_git() -> None:
    assert blob_id(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    assert blob_id(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


def test_current_entry_sees_a_path_under_a_symlinked_folder_as_absent(tmp_path: Path) -> None:
    root, out = tmp_path / "ws", tmp_path / "out"
    root.mkdir(), out.mkdir()
    (out / "f.txt").write_text("x")
    (root / "d").symlink_to(out)
    (root / "e.txt").write_text("x")
    (root / "x.sh").write_text("x")
    (root / "x.sh").chmod(0o755)
    fd = _root_fd(root)
    try:
        assert current_entry(fd, "d/f.txt", 1 << 20) is None
        assert current_entry(fd, "d", 1 << 20) == Entry(SYMLINK, blob_id(os.fsencode(str(out))))
        assert current_entry(fd, "e.txt", 1 << 20) == Entry("100644", blob_id(b"x"))
        assert current_entry(fd, "x.sh", 1 << 20) == Entry("100755", blob_id(b"x"))
        too_large = current_entry(fd, "e.txt", 0)
        assert too_large is not None and too_large != Entry("100644", blob_id(b"x"))
    finally:
        os.close(fd)


@pytest.mark.parametrize("rel", ["d/f.txt", "d/sub/g.txt"])
def test_remove_and_write_refuse_a_symlinked_folder(tmp_path: Path, rel: str) -> None:
    root, out = tmp_path / "ws", tmp_path / "out"
    root.mkdir(), (out / "sub").mkdir(parents=True)
    (out / "f.txt").write_text("victim")
    (out / "sub" / "g.txt").write_text("victim")
    (root / "d").symlink_to(out)
    victim = Entry("100644", blob_id(b"victim"))
    blobs = {blob_id(b"overwritten"): b"overwritten"}
    for change in (Change(rel, None, victim), Change(rel, Entry("100644", blob_id(b"overwritten")), victim)):
        applied = apply_undo(str(root), [change], blobs, set(), 1 << 20)
        assert applied.conflicts == [rel] and applied.restored == applied.removed == []
    assert (out / "f.txt").read_text() == "victim" and (out / "sub" / "g.txt").read_text() == "victim"
    assert sorted(p.name for p in out.rglob("*")) == ["f.txt", "g.txt", "sub"]


def test_remove_unlinks_the_link_itself_and_prunes_empty_folders(tmp_path: Path) -> None:
    root, out = tmp_path / "ws", tmp_path / "out"
    (root / "a" / "b").mkdir(parents=True), out.mkdir()
    (out / "keep").write_text("k")
    (root / "a" / "b" / "link").symlink_to(out)
    change = Change("a/b/link", None, Entry(SYMLINK, blob_id(os.fsencode(str(out)))))
    applied = apply_undo(str(root), [change], {}, set(), 1 << 20)
    assert applied.removed == ["a/b/link"]
    assert not (root / "a").exists() and (out / "keep").exists()


def test_rejects_escaping_paths(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text("after")
    (tmp_path / "x").write_text("after")
    after = Entry("100644", blob_id(b"after"))
    for bad in ("../x", "a/../../x", "", "/", ".git/config", "sub/.GIT/hooks/pre-commit"):
        for change in (Change(bad, None, after), Change(bad, Entry("100644", blob_id(b"evil")), after)):
            applied = apply_undo(str(root), [change], {blob_id(b"evil"): b"evil"}, set(), 1 << 20)
            assert applied.conflicts == [bad] and applied.restored == applied.removed == [], bad
    assert (root / ".git" / "config").read_text() == "after" and (tmp_path / "x").read_text() == "after"


def test_apply_undo_writes_modes_and_links_and_keeps_drifted_paths(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "run.sh").write_text("after")
    (root / "drift.txt").write_text("user")
    (root / "ln").write_text("after")
    changes = [
        Change("run.sh", Entry("100755", blob_id(b"#!/bin/sh\n")), Entry("100644", blob_id(b"after"))),
        Change("drift.txt", Entry("100644", blob_id(b"before")), Entry("100644", blob_id(b"after"))),
        Change("ln", Entry(SYMLINK, blob_id(b"run.sh")), Entry("100644", blob_id(b"after"))),
        Change("gone/deep.txt", Entry("100644", blob_id(b"deep")), None),
    ]
    blobs = {blob_id(b"#!/bin/sh\n"): b"#!/bin/sh\n", blob_id(b"before"): b"before", blob_id(b"run.sh"): b"run.sh",
             blob_id(b"deep"): b"deep"}  # fmt: skip
    applied = apply_undo(str(root), changes, blobs, set(), 1 << 20)
    assert applied.conflicts == ["drift.txt"]
    assert applied.restored == ["gone/deep.txt", "ln", "run.sh"]
    assert os.access(root / "run.sh", os.X_OK) and (root / "run.sh").read_text() == "#!/bin/sh\n"
    assert os.readlink(root / "ln") == "run.sh"
    assert (root / "gone" / "deep.txt").read_text() == "deep"
    assert (root / "drift.txt").read_text() == "user"
    assert not [p for p in root.rglob("*") if p.name.startswith(".")]  # no temporary left
