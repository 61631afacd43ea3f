"""`/undo` never removes or writes through a symlink that leads outside the workspace.

Each test plays the attacker: a submission (or something after it, such as a job the submission
left running) swaps a folder of the workspace for a symlink to a folder outside it, and `/undo`
is asked to remove or restore paths under that folder. The files outside must stay untouched.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from harness import init_git, lsp_session

FILES = {"a.txt": "alpha\n", "d/f.txt": "inside\n", "keep/k.txt": "k\n"}


def outside_dir(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "f.txt").write_text("victim f\n")
    (out / "new.txt").write_text("victim new\n")
    return out


def outside_state(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): p.read_text() for p in sorted(out.rglob("*")) if p.is_file()}


async def test_removal_does_not_follow_a_folder_swapped_for_an_outside_symlink(tmp_path: Path) -> None:
    root = init_git(tmp_path / "ws", FILES)
    out = outside_dir(tmp_path)
    before_outside = outside_state(out)
    async with lsp_session(root) as s:
        done = await s.execute("coder.input", {"text": "!mkdir -p made && echo new > made/new.txt"})
        assert done["status"] == "completed"
        # after the submission: the folder it created becomes a link to a folder outside
        shutil.rmtree(root / "made")
        (root / "made").symlink_to(out, target_is_directory=True)
        result = await s.execute("coder.undo", {})
        assert outside_state(out) == before_outside
        assert result["status"] == "completed"
        assert "made/new.txt" not in result["data"]["removed"]
    assert (root / "made").is_symlink()  # not ours to remove: it is not what the submission left


async def test_restore_does_not_write_through_a_folder_swapped_for_an_outside_symlink(tmp_path: Path) -> None:
    root = init_git(tmp_path / "ws", FILES)
    out = outside_dir(tmp_path)
    os.remove(out / "f.txt")  # so that a write through the link would create it
    before_outside = outside_state(out)
    async with lsp_session(root) as s:
        await s.execute("coder.input", {"text": "!rm d/f.txt"})
        shutil.rmtree(root / "d")
        (root / "d").symlink_to(out, target_is_directory=True)
        result = await s.execute("coder.undo", {})
        assert result["status"] == "completed"
        assert "d/f.txt" not in result["data"]["restored"]
    assert outside_state(out) == before_outside
    assert not (out / "f.txt").exists()


async def test_submission_that_replaces_a_folder_by_an_outside_symlink_is_undone_inside(tmp_path: Path) -> None:
    root = init_git(tmp_path / "ws", FILES)
    out = outside_dir(tmp_path)
    before_outside = outside_state(out)
    async with lsp_session(root) as s:
        await s.execute("coder.input", {"text": f"!rm -rf d && ln -s {out} d"})
        assert (root / "d").is_symlink()
        result = await s.execute("coder.undo", {})
        assert result["status"] == "completed"
        assert result["data"]["restored"] == ["d/f.txt"]
        assert result["data"]["removed"] == ["d"]
    assert outside_state(out) == before_outside  # the link was removed, never what it points at
    assert not (root / "d").is_symlink() and (root / "d" / "f.txt").read_text() == "inside\n"


async def test_files_written_through_a_new_outside_link_stay_where_they_are(tmp_path: Path) -> None:
    root = init_git(tmp_path / "ws", FILES)
    out = outside_dir(tmp_path)
    async with lsp_session(root) as s:
        command = f"!ln -s {out} link && echo written > link/x.txt && echo new > link/new.txt"
        await s.execute("coder.input", {"text": command})
        expected_outside = outside_state(out)
        result = await s.execute("coder.undo", {})
        assert result["status"] == "completed"
        assert result["data"]["removed"] == ["link"]
    assert not (root / "link").exists() and not (root / "link").is_symlink()
    assert outside_state(out) == expected_outside


async def test_removal_does_not_follow_a_parent_of_the_workspace_path_swapped_deeper(tmp_path: Path) -> None:
    """The swapped folder is two levels up from the file to remove."""
    root = init_git(tmp_path / "ws", FILES)
    out = outside_dir(tmp_path)
    (out / "sub").mkdir()
    (out / "sub" / "deep.txt").write_text("victim deep\n")
    before_outside = outside_state(out)
    async with lsp_session(root) as s:
        await s.execute("coder.input", {"text": "!mkdir -p top/sub && echo d > top/sub/deep.txt"})
        shutil.rmtree(root / "top")
        (root / "top").symlink_to(out, target_is_directory=True)
        result = await s.execute("coder.undo", {})
        assert result["status"] == "completed"
        assert result["data"]["removed"] == []
        assert "top/sub/deep.txt" in result["data"]["conflicts"]
    assert outside_state(out) == before_outside
