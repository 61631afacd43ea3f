"""The agent's file writes never land outside the workspace, even when a folder on the way
is swapped for a symlink between the path check and the write; grep without ripgrep does
not follow a symlink out of the workspace."""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
from pathlib import Path

from harness import init_git

from coder_ls.agent.tools import ToolContext
from coder_ls.agent.tools.files import make_write_tool
from coder_ls.agent.tools.search import make_grep_tool
from coder_ls.fsutil import UnsafePathError, write_atomic
from coder_ls.protocol.config import Config


class _NoEditorHost:
    """A host without applyEdit: the write tool writes the disk itself."""

    class caps:
        apply_edit = False

    def open_document(self, path: Path) -> None:
        return None

    def open_paths(self) -> list[Path]:
        return []


def _ctx(root: Path) -> ToolContext:
    return ToolContext(root=root, config=Config(), host=_NoEditorHost())  # type: ignore[arg-type]


def _flipper(link: Path, inside: Path, outside: Path, stop: threading.Event) -> None:
    """Swap `link` between a real folder inside and a symlink to outside, as fast as it can."""
    while not stop.is_set():
        for target in (outside, inside):
            tmp = link.with_name(link.name + ".tmp")
            try:
                os.symlink(target, tmp)
                os.replace(tmp, link)
            except OSError:
                pass


async def test_write_tool_never_lands_outside_while_a_folder_flips(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "real").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    link = root / "sub"
    os.symlink(root / "real", link)
    tool = make_write_tool()
    stop = threading.Event()
    thread = threading.Thread(target=_flipper, args=(link, root / "real", outside, stop), daemon=True)
    thread.start()
    try:
        for n in range(300):
            try:
                await tool.call(_ctx(root), {"path": f"sub/f{n}.txt", "content": "data\n"})
            except Exception:
                pass  # refused (outside at check time) or failed (changed during the write): both fine
    finally:
        stop.set()
        thread.join()
    assert list(outside.iterdir()) == [], "a write landed outside the workspace"
    assert any((root / "real").iterdir()), "no write went through at all: the test proves nothing"


def test_write_atomic_refuses_a_parent_swapped_after_resolution(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "ws"
    (root / "d").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    real_realpath = os.path.realpath

    def realpath_then_swap(p, *a, **k):  # the swap happens right after the check
        out = real_realpath(p, *a, **k)
        if str(p).endswith("d/x.txt") and (root / "d").is_dir() and not (root / "d").is_symlink():
            os.rename(root / "d", root / "d.old")
            os.symlink(outside, root / "d")
        return out

    monkeypatch.setattr(os.path, "realpath", realpath_then_swap)
    try:
        write_atomic(root / "d" / "x.txt", b"data", root=root)
    except UnsafePathError:
        pass
    assert list(outside.iterdir()) == []


def test_write_atomic_refuses_paths_outside_root(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, root / "out")
    try:
        write_atomic(root / "out" / "x.txt", b"data", root=root)
        raised = False
    except UnsafePathError:
        raised = True
    assert raised and list(outside.iterdir()) == []


async def test_grep_without_ripgrep_stays_inside(tmp_path: Path) -> None:
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "key.txt").write_text("needle SECRET\n")
    root = init_git(tmp_path / "ws", {"in.txt": "needle inside\n"})
    os.symlink(outside, root / "linkdir")
    os.symlink(outside / "key.txt", root / "linkfile.txt")  # git lists it: a tracked-looking file
    tool = make_grep_tool(find_rg=lambda: None)
    out = await tool.call(_ctx(root), {"pattern": "needle"})
    text = out.text
    assert "needle inside" in text
    assert "SECRET" not in text


async def test_grep_with_ripgrep_and_no_path_answers(tmp_path: Path) -> None:
    import shutil

    if shutil.which("rg") is None:
        import pytest

        pytest.skip("ripgrep is not installed")
    root = tmp_path / "ws"
    root.mkdir()
    (root / "in.txt").write_text("needle inside\n")
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "key.txt").write_text("needle SECRET\n")
    os.symlink(outside, root / "linkdir")
    tool = make_grep_tool()
    out = await asyncio.wait_for(tool.call(_ctx(root), {"pattern": "needle"}), 10)
    text = out.text
    assert "needle inside" in text and "SECRET" not in text


def test_the_file_list_leaves_out_whatever_leads_outside(tmp_path: Path) -> None:
    """`list_files` (glob, grep without ripgrep, `@` completion and references) lists a path
    only when its real location is in the workspace: a link out, a tracked file whose folder
    was swapped for a link out (git still lists it from its index), a link into that folder;
    a link that stays inside, and files in real folders, are listed."""
    from coder_ls.engine.filelist import list_files

    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "key.txt").write_text("SECRET\n")
    (outside / "a.txt").write_text("SECRET\n")
    root = init_git(tmp_path / "ws", {"in.txt": "x\n", "sub/a.txt": "x\n", "deep/er/b.txt": "x\n"})
    shutil.rmtree(root / "sub")
    os.symlink(outside, root / "sub")  # the index still holds sub/a.txt
    os.symlink(outside / "key.txt", root / "out.txt")
    os.symlink(root / "in.txt", root / "alias.txt")
    os.symlink("sub/a.txt", root / "via.txt")  # inside by name, outside for real
    os.mkfifo(root / "pipe")
    assert list_files(root) == ["alias.txt", "deep/er/b.txt", "in.txt"]


def test_every_atomic_write_names_its_root() -> None:
    """The one atomic write has no default root, and every call in the code names one: an
    edge cannot write an edit without the workspace bounding it (issue 36 item 1)."""
    import ast
    import inspect

    import coder_ls

    assert inspect.signature(write_atomic).parameters["root"].default is inspect.Parameter.empty
    calls = []
    for path in Path(coder_ls.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if name == "write_atomic":
                    calls.append((path.name, node.lineno, {k.arg for k in node.keywords}))
    assert len(calls) >= 10, calls
    assert [c for c in calls if "root" not in c[2]] == []


def test_link_out_names_the_component_that_leads_out(tmp_path: Path) -> None:
    from coder_ls.fsutil import link_out

    root = tmp_path / "ws"
    (root / "sub" / "real").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, root / "sub" / "out")
    os.symlink(root / "sub" / "real", root / "sub" / "in")
    os.symlink("../out", root / "sub" / "real" / "via")
    assert link_out(root, root / "sub" / "real" / "new" / "f.txt") is None  # missing parts are fine
    assert link_out(root, root / "sub" / "in" / "f.txt") is None  # a link that stays inside
    assert link_out(root, root / "sub" / "out" / "f.txt") == root / "sub" / "out"
    assert link_out(root, root / "sub" / "in" / "via" / "f.txt") == root / "sub" / "in" / "via"
    assert link_out(root, tmp_path / "elsewhere.txt") == tmp_path / "elsewhere.txt"


async def test_an_edge_write_through_a_folder_that_became_a_link_out_fails(tmp_path: Path) -> None:
    """The LSP edge without applyEdit writes the disk itself: a folder swapped for a link
    out before the write fails the edit, named, and nothing lands outside."""
    from coder_ls.engine.host import ClientCaps
    from coder_ls.lsp.host import LspHost
    from coder_ls.protocol.edits import EditRequest, FileChange

    root = tmp_path / "ws"
    (root / "d").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    host = LspHost(None, ClientCaps(), None)  # type: ignore[arg-type]
    change = FileChange(path=str(root / "d" / "x.txt"), kind="create", new_text="data\n")
    shutil.rmtree(root / "d")
    os.symlink(outside, root / "d")
    outcome = await host.apply_edit(EditRequest(label="Write", changes=(change,), root=str(root)))
    assert not outcome.applied and outcome.failed
    assert "d became a link leading outside the workspace" in (outcome.reason or ""), outcome
    assert list(outside.iterdir()) == []
