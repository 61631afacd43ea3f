"""`isolation.patches.apply_patch` on real git patches: all or nothing, both sides of a
conflict, and the guards an edit has (the attacks a step's patch could try)."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import msgspec

from coder_ls.isolation.patches import apply_patch, whole_edit
from coder_ls.protocol.edits import EditOutcome, EditRequest


class Caps(msgspec.Struct, frozen=True):
    apply_edit: bool = False


class DiskEditor:
    """No editor: the server writes the disk itself (what a client without applyEdit gets)."""

    caps = Caps()

    def open_document(self, path: Path) -> None:
        return None

    async def apply_edit(self, request: EditRequest) -> EditOutcome:  # pragma: no cover - caps say no
        raise AssertionError("no applyEdit here")


def git(cwd: Path, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, stdin=subprocess.DEVNULL).stdout


def repo(tmp: Path, files: dict[str, str]) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    git(tmp, "init", "-q")
    for rel, text in files.items():
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / rel).write_text(text)
    git(tmp, "add", "-A")
    git(tmp, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    return tmp


def step_patch(tmp: Path, files: dict[str, str], change) -> bytes:
    """The patch a step makes: a copy of `files`, `change(copy)`, `git diff --binary`."""
    work = repo(tmp / "step", files)
    change(work)
    git(work, "add", "-A")
    return git(work, "diff", "--cached", "--binary", "--full-index", "--no-renames", "HEAD")


def run(patch: bytes, root: Path):
    return asyncio.run(apply_patch(patch, root=root, editor=DiskEditor(), label="Coder: step"))


def test_a_patch_applies_text_binary_deletion_and_mode(tmp_path):
    base = {"a.txt": "one\ntwo\n", "gone.txt": "x\n", "run.sh": "echo\n"}
    ws = repo(tmp_path / "ws", base)

    def change(w: Path) -> None:
        (w / "a.txt").write_text("one\nTWO\n")
        (w / "gone.txt").unlink()
        (w / "new" / "deep").mkdir(parents=True)
        (w / "new" / "deep" / "b.bin").write_bytes(b"\x00\x01\xff" * 100)
        os.chmod(w / "run.sh", 0o755)

    result = run(step_patch(tmp_path, base, change), ws)
    assert result.status == "applied", result.message
    assert (ws / "a.txt").read_text() == "one\nTWO\n"
    assert not (ws / "gone.txt").exists()
    assert (ws / "new/deep/b.bin").read_bytes() == b"\x00\x01\xff" * 100
    assert os.stat(ws / "run.sh").st_mode & 0o100
    assert sorted(result.applied) == ["a.txt", "gone.txt", "new/deep/b.bin", "run.sh"]


def test_a_conflict_writes_nothing_and_shows_both_sides(tmp_path):
    base = {"a.txt": "one\ntwo\nthree\n", "b.txt": "b\n"}
    ws = repo(tmp_path / "ws", base)

    def change(w: Path) -> None:
        (w / "a.txt").write_text("one\nstep's two\nthree\n")
        (w / "b.txt").write_text("b changed\n")

    patch = step_patch(tmp_path, base, change)
    (ws / "a.txt").write_text("one\nuser's two\nthree\n")  # the user changed it since
    result = run(patch, ws)
    assert result.status == "conflict"
    assert (ws / "b.txt").read_text() == "b\n"  # all or nothing
    [c] = result.conflicts
    assert c.path == "a.txt"
    assert "+step's two" in c.hunk and "-two" in c.hunk
    assert c.current == "one\nuser's two\nthree\n"
    assert "user's two" in result.message and "+step's two" in result.message


def test_protected_paths_and_escapes_are_refused(tmp_path):
    ws = repo(tmp_path / "ws", {"a.txt": "a\n"})
    hook = (
        b"diff --git a/.git/hooks/pre-commit b/.git/hooks/pre-commit\nnew file mode 100755\n"
        b"index 0000000..1111111\n--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+touch /tmp/pwned\n"
    )
    coder = hook.replace(b".git/hooks/pre-commit", b".coder/config.json")
    claude = hook.replace(b".git/hooks/pre-commit", b"sub/.claude/settings.json")
    up = hook.replace(b".git/hooks/pre-commit", b"../outside.txt")
    for patch in (hook, coder, claude, up):
        result = run(patch, ws)
        assert result.status in ("refused", "failed"), result
        assert not result.applied
    assert not (ws / ".git/hooks/pre-commit").exists()
    assert not (ws / ".coder").exists() and not (tmp_path / "outside.txt").exists()


def test_a_rename_into_git_hooks_is_refused(tmp_path):
    base = {"hook.sh": "#!/bin/sh\ntouch /tmp/pwned\n"}
    ws = repo(tmp_path / "ws", base)
    patch = (
        b"diff --git a/hook.sh b/.git/hooks/post-checkout\nsimilarity index 100%\n"
        b"rename from hook.sh\nrename to .git/hooks/post-checkout\n"
    )
    result = run(patch, ws)
    assert result.status == "refused"
    assert [r.path for r in result.refused] == [".git/hooks/post-checkout"]
    assert (ws / "hook.sh").exists() and not (ws / ".git/hooks/post-checkout").exists()


def test_a_symlink_out_and_a_write_through_it_are_refused(tmp_path):
    base = {"a.txt": "a\n"}
    ws = repo(tmp_path / "ws", base)
    outside = tmp_path / "outside"
    outside.mkdir()

    def change(w: Path) -> None:
        os.symlink(str(outside), w / "out")

    result = run(step_patch(tmp_path, base, change), ws)
    assert result.status == "refused" and result.refused[0].path == "out"
    assert not os.path.lexists(ws / "out")
    # a hand-made patch: the link, then a file "through" it
    evil = (
        b"diff --git a/out b/out\nnew file mode 120000\nindex 0000000..1111111\n--- /dev/null\n+++ b/out\n"
        b"@@ -0,0 +1 @@\n+" + str(outside).encode() + b"\n\\ No newline at end of file\n"
        b"diff --git a/out/x b/out/x\nnew file mode 100644\nindex 0000000..2222222\n--- /dev/null\n+++ b/out/x\n"
        b"@@ -0,0 +1 @@\n+pwned\n"
    )
    result = run(evil, ws)
    assert not result.ok and not result.applied
    assert list(outside.iterdir()) == []
    # the workspace already holds a link out: a patch does not write through it
    os.symlink(str(outside), ws / "link")
    through = evil.split(b"diff --git a/out/x")[1].replace(b"out/x", b"link/x")
    result = run(b"diff --git a/link/x" + through, ws)
    assert result.status == "refused" and "link" in result.refused[0].reason
    assert list(outside.iterdir()) == []


def test_whole_edit_spans_only_the_changed_lines():
    [e] = whole_edit("a\nb\nc\n", "a\nB\nc\n")
    assert (e.start_line, e.end_line, e.new_text) == (1, 2, "B\n")
    [e] = whole_edit("a\nb", "a\nbé")
    assert (e.start_line, e.end_line, e.end_character, e.new_text) == (1, 1, 1, "bé")


def test_whole_edit_counts_lines_as_lsp_does():
    # a form feed or U+2028 ends no line for LSP (Python's splitlines would split there)
    [e] = whole_edit("a\x0cb\nc\u2028d\nend\n", "a\x0cb\nc\u2028D\nend\n")
    assert (e.start_line, e.end_line, e.new_text) == (1, 2, "c\u2028D\n")
    [e] = whole_edit("x\r\ny\r\n", "x\r\nY\r\n")
    assert (e.start_line, e.end_line, e.new_text) == (1, 2, "Y\r\n")
