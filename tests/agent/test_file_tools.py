from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from coder_ls.agent.textedits import apply_edits
from coder_ls.agent.tools import build_default_tools
from coder_ls.engine.host import OpenDocument
from coder_ls.protocol.config import Config
from coder_ls.protocol.events import EditApplied

TOOLS = build_default_tools(check_command=lambda c, r: None)


async def call(h, name: str, **raw):
    tool = TOOLS.get(name)
    assert tool is not None
    return await tool.call(h.ctx, raw)


# --- read -----------------------------------------------------------------------------------


async def test_read_numbers_lines(harness) -> None:
    (harness.root / "a.py").write_text("one\ntwo\r\nthree")
    out = await call(harness, "read", path="a.py")
    assert not out.is_error
    assert out.text == "1\tone\n2\ttwo\n3\tthree"


async def test_read_range(harness) -> None:
    (harness.root / "a.txt").write_text("".join(f"l{i}\n" for i in range(1, 11)))
    out = await call(harness, "read", path="a.txt", offset=3, limit=2)
    assert out.text.splitlines()[:2] == ["3\tl3", "4\tl4"]
    assert "lines 3-4 of 10" in out.text
    past = await call(harness, "read", path="a.txt", offset=50)
    assert past.is_error and "past the end" in past.text


async def test_read_sees_unsaved_buffer(harness) -> None:
    path = harness.root / "a.py"
    path.write_text("on disk\n")
    harness.host.docs[path] = OpenDocument("in the editor\n", 7)
    out = await call(harness, "read", path="a.py")
    assert "in the editor" in out.text and "on disk" not in out.text
    assert "unsaved" in out.text


async def test_read_binary_and_huge_are_summarised(harness) -> None:
    (harness.root / "b.bin").write_bytes(b"\x89PNG\x00\x01\x02" * 10)
    out = await call(harness, "read", path="b.bin")
    assert "binary file (70 bytes)" in out.text
    (harness.root / "big.txt").write_text("".join(f"row {i}\n" for i in range(5000)))
    out = await call(harness, "read", path="big.txt")
    assert "large file" in out.text and "5000 lines" in out.text
    assert "row 0" in out.text and "row 4999" not in out.text
    ranged = await call(harness, "read", path="big.txt", offset=4999, limit=5)
    assert "row 4999" in ranged.text


async def test_read_errors(harness) -> None:
    (harness.root / "d").mkdir()
    assert "is a directory" in (await call(harness, "read", path="d")).text
    missing = await call(harness, "read", path="nope.py")
    assert missing.is_error and "not found" in missing.text
    bad = await call(harness, "read", path="a", offset=0)
    assert bad.is_error and "invalid input for read" in bad.text
    unknown = await call(harness, "read", path="a", lines=3)
    assert unknown.is_error and "lines" in unknown.text
    (harness.root / "e.txt").write_text("")
    assert "empty file" in (await call(harness, "read", path="e.txt")).text


# --- write / edit through the host ----------------------------------------------------------


async def test_write_new_file_is_a_create(harness) -> None:
    out = await call(harness, "write", path="src/new.py", content="x = 1\n")
    assert not out.is_error, out.text
    (req,) = harness.host.edits
    (change,) = req.changes
    assert change.kind == "create" and change.new_text == "x = 1\n"
    assert change.path == str(harness.root / "src" / "new.py")
    assert not (harness.root / "src" / "new.py").exists()  # the editor applies it
    assert harness.reports == ["Editing src/new.py"]
    (ev,) = harness.of(EditApplied)
    assert ev.applied and ev.uri == (harness.root / "src" / "new.py").as_uri()
    assert harness.ctx.changed_paths == {str(harness.root / "src" / "new.py")}


async def test_write_existing_open_file_gives_versioned_minimal_edits(harness) -> None:
    path = harness.root / "a.py"
    path.write_text("old disk text\n")
    buffer = "".join(f"line {i}\n" for i in range(50))
    harness.host.docs[path] = OpenDocument(buffer, 12)
    new = buffer.replace("line 20\n", "line twenty\n")
    out = await call(harness, "write", path="a.py", content=new)
    assert not out.is_error
    (change,) = harness.host.edits[0].changes
    assert change.kind == "edit" and change.base_version == 12
    assert len(change.edits) == 1 and change.edits[0].start_line == 20
    assert apply_edits(buffer, change.edits) == new


async def test_write_keeps_crlf_and_skips_identical(harness) -> None:
    path = harness.root / "w.txt"
    path.write_bytes(b"a\r\nb\r\n")
    out = await call(harness, "write", path="w.txt", content="a\r\nb\r\n")
    assert "nothing changed" in out.text and not harness.host.edits
    await call(harness, "write", path="w.txt", content="a\nc\n")
    assert harness.host.edits[0].changes[0].new_text == "a\r\nc\r\n"


async def test_edit_unique_match(harness) -> None:
    path = harness.root / "app.py"
    path.write_text("def f():\n    return 1\n")
    out = await call(harness, "edit", path="app.py", oldString="return 1", newString="return 2")
    assert not out.is_error and "replaced 1 occurrence" in out.text
    (change,) = harness.host.edits[0].changes
    assert change.new_text == "def f():\n    return 2\n"
    assert change.base_version is None
    assert apply_edits("def f():\n    return 1\n", change.edits) == change.new_text


async def test_edit_errors(harness) -> None:
    (harness.root / "a.py").write_text("x = 1\nx = 1\n")
    missing = await call(harness, "edit", path="a.py", oldString="y = 1", newString="y = 2")
    assert missing.is_error and "not found" in missing.text
    many = await call(harness, "edit", path="a.py", oldString="x = 1", newString="x = 2")
    assert many.is_error and "matches 2 times" in many.text and "more surrounding context" in many.text
    same = await call(harness, "edit", path="a.py", oldString="x", newString="x")
    assert same.is_error and "identical" in same.text
    nofile = await call(harness, "edit", path="b.py", oldString="a", newString="b")
    assert nofile.is_error and "not found" in nofile.text
    assert not harness.host.edits
    allx = await call(harness, "edit", path="a.py", oldString="x = 1", newString="x = 2", replaceAll=True)
    assert "replaced 2 occurrences" in allx.text


async def test_edit_crlf_file_with_lf_input(harness) -> None:
    (harness.root / "c.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    out = await call(harness, "edit", path="c.txt", oldString="one\ntwo", newString="1\n2")
    assert not out.is_error, out.text
    assert harness.host.edits[0].changes[0].new_text == "1\r\n2\r\nthree\r\n"


async def test_edit_uses_open_buffer(harness) -> None:
    path = harness.root / "a.py"
    path.write_text("disk\n")
    harness.host.docs[path] = OpenDocument("buffer value\n", 3)
    out = await call(harness, "edit", path="a.py", oldString="value", newString="text")
    assert not out.is_error
    change = harness.host.edits[0].changes[0]
    assert change.new_text == "buffer text\n" and change.base_version == 3


async def test_rejected_edit_is_a_tool_error(make_harness) -> None:
    h = make_harness(applied=False, reason="user said no")
    (h.root / "a.py").write_text("a\n")
    out = await call(h, "edit", path="a.py", oldString="a", newString="b")
    assert out.is_error and out.text == "the user rejected the edit: user said no"
    (ev,) = h.of(EditApplied)
    assert not ev.applied
    assert h.ctx.changed_paths == set()


async def test_multi_edit_all_or_nothing(harness) -> None:
    (harness.root / "m.py").write_text("a = 1\nb = 2\n")
    edits = [{"oldString": "a = 1", "newString": "a = 10"}, {"oldString": "zzz", "newString": "q"}]
    out = await call(harness, "multiEdit", path="m.py", edits=edits)
    assert out.is_error and "edit 2 of 2" in out.text and "nothing was changed" in out.text
    assert not harness.host.edits
    edits = [
        {"oldString": "a = 1", "newString": "a = 10"},
        {"oldString": "a = 10\nb = 2", "newString": "a = 10\nb = 20"},
    ]
    out = await call(harness, "multiEdit", path="m.py", edits=edits)
    assert not out.is_error, out.text
    (req,) = harness.host.edits
    assert req.changes[0].new_text == "a = 10\nb = 20\n"
    empty = await call(harness, "multiEdit", path="m.py", edits=[])
    assert empty.is_error and "invalid input" in empty.text


# --- no applyEdit: on disk ----------------------------------------------------------------


async def test_without_apply_edit_files_are_written_atomically(make_harness) -> None:
    h = make_harness(apply_edit=False)
    path = h.root / "run.sh"
    path.write_text("echo a\n")
    os.chmod(path, 0o750)
    out = await call(h, "edit", path="run.sh", oldString="echo a", newString="echo b")
    assert not out.is_error
    assert path.read_text() == "echo b\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o750
    assert not h.host.edits
    assert [p.name for p in h.root.iterdir()] == ["run.sh"]  # no temp file left
    out = await call(h, "write", path="deep/dir/new.txt", content="hi")
    assert (h.root / "deep" / "dir" / "new.txt").read_text() == "hi"
    assert h.of(EditApplied)[-1].applied


# --- paths --------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", ["read", "write", "edit"])
async def test_path_escapes_are_refused(harness, tmp_path: Path, tool: str) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    os.symlink(outside, harness.root / "link.txt")
    extra = {"read": {}, "write": {"content": "x"}, "edit": {"oldString": "secret", "newString": "x"}}[tool]
    for raw in ["../outside.txt", str(outside), "link.txt"]:
        out = await call(harness, tool, path=raw, **extra)
        assert out.is_error and "outside the workspace" in out.text, (raw, out.text)
    assert outside.read_text() == "secret\n"
    assert not harness.host.edits


async def test_allow_outside_workspace(make_harness, tmp_path: Path) -> None:
    h = make_harness(Config(allow_outside_workspace=True))
    (tmp_path / "o.txt").write_text("there\n")
    out = await call(h, "read", path=str(tmp_path / "o.txt"))
    assert "there" in out.text


async def test_the_edit_names_the_root_that_bounds_it(make_harness, tmp_path: Path) -> None:
    """The edge bounds its writes and checks by the request's root: the workspace, or, when
    the user let the tools reach outside it, anywhere (such a write lands, on disk too)."""
    h = make_harness()
    await call(h, "write", path="a.txt", content="x\n")
    assert h.host.edits[-1].root == str(h.root)
    wide = make_harness(Config(allow_outside_workspace=True), apply_edit=False)
    out = await call(wide, "write", path=str(tmp_path / "o.txt"), content="there\n")
    assert not out.is_error, out.text
    assert (tmp_path / "o.txt").read_text() == "there\n"


async def test_read_and_edit_of_a_buffer_equal_to_the_disk_is_not_unsaved(harness) -> None:
    path = harness.root / "same.py"
    path.write_text("x = 1\n")
    harness.host.docs[path] = OpenDocument("x = 1\n", 2)
    out = await call(harness, "read", path="same.py")
    assert not out.unsaved and "unsaved" not in out.text
    edited = await call(harness, "edit", path="same.py", oldString="x = 1", newString="x = 2")
    assert not edited.is_error and not edited.unsaved and "unsaved" not in edited.text
    assert harness.host.edits[0].changes[0].base_version == 2  # still the buffer's version


async def test_an_unsaved_buffer_is_never_written_over_on_disk(make_harness) -> None:
    """A client that cannot apply edits but holds an unsaved buffer: the edit is refused, the
    disk and the buffer keep their texts (contract section 23)."""
    h = make_harness(apply_edit=False)
    path = h.root / "typed.py"
    path.write_text("x = 1\n")
    h.host.docs[path] = OpenDocument("x = 1\ny = 2\n", 3)
    out = await call(h, "edit", path="typed.py", oldString="y = 2", newString="y = 3")
    assert out.is_error and "unsaved changes" in out.text
    assert path.read_text() == "x = 1\n" and h.host.edits == []
