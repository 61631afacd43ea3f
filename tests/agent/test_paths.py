from __future__ import annotations

import os
from pathlib import Path

import pytest

from coder_ls.agent.paths import PathError, display_path, resolve_path
from coder_ls.globs import glob_match


def test_relative_and_absolute_inside(workspace: Path) -> None:
    assert resolve_path(workspace, "src/app.py") == workspace / "src" / "app.py"
    assert resolve_path(workspace, str(workspace / "a.txt")) == workspace / "a.txt"
    assert resolve_path(workspace, "./x/../y") == workspace / "y"
    assert resolve_path(workspace, workspace.as_uri() + "/z.py") == workspace / "z.py"


@pytest.mark.parametrize("raw", ["../outside.txt", "a/../../outside.txt", "/etc/passwd"])
def test_escapes_are_refused(workspace: Path, raw: str) -> None:
    with pytest.raises(PathError, match="outside the workspace"):
        resolve_path(workspace, raw)


def test_symlink_leaving_the_root_is_refused(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "key").write_text("k")
    os.symlink(outside, workspace / "link")
    with pytest.raises(PathError, match="outside the workspace"):
        resolve_path(workspace, "link/key")
    os.symlink(workspace / "inner", workspace / "ok")
    assert resolve_path(workspace, "ok/file") == workspace / "ok" / "file"


def test_allow_outside(workspace: Path) -> None:
    assert resolve_path(workspace, "/etc/passwd", allow_outside=True) == Path("/etc/passwd")


def test_empty_path(workspace: Path) -> None:
    with pytest.raises(PathError):
        resolve_path(workspace, "  ")


def test_display_path(workspace: Path) -> None:
    assert display_path(workspace, workspace / "a" / "b.py") == "a/b.py"
    assert display_path(workspace, Path("/etc/x")) == "/etc/x"


@pytest.mark.parametrize(
    ("pattern", "path", "ok"),
    [
        ("**/*.py", "a/b/c.py", True),
        ("**/*.py", "c.py", True),
        ("*.py", "a/c.py", False),
        ("src/**", "src/a/b.ts", True),
        ("src/*.{ts,tsx}", "src/a.tsx", True),
        ("src/*.{ts,tsx}", "src/a.js", False),
        ("file?.txt", "file1.txt", True),
        ("[ab].md", "c.md", False),
        ("./docs/*.md", "docs/x.md", True),
    ],
)
def test_glob_match(pattern: str, path: str, ok: bool) -> None:
    assert glob_match(pattern, path) is ok
