"""Real git repositories in tmp dirs, isolated from the developer's own git configuration."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from ckpt_helpers import git, write


@pytest.fixture(autouse=True)
def _isolated_git(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    home = tmp_path_factory.mktemp("home")
    saved = dict(os.environ)
    os.environ.update(
        HOME=str(home),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME="Test User",
        GIT_AUTHOR_EMAIL="test@example.com",
        GIT_COMMITTER_NAME="Test User",
        GIT_COMMITTER_EMAIL="test@example.com",
    )
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repo with two commits, a stash, a staged change and a .gitignore."""
    root = tmp_path / "ws"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, ".gitignore", "build/\n*.log\n")
    write(root, "a.txt", "a1\n")
    write(root, "b.txt", "b1\n")
    write(root, "src/m.py", "print('m')\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    write(root, "a.txt", "a2\n")
    git(root, "commit", "-q", "-am", "second")
    write(root, "b.txt", "stashed\n")
    git(root, "stash", "-q")
    write(root, "src/m.py", "print('staged')\n")
    git(root, "add", "src/m.py")
    write(root, "build/keep.o", "object\n")
    write(root, "debug.log", "log\n")
    return root


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    """A workspace that is not a git repository."""
    root = tmp_path / "plain"
    root.mkdir()
    write(root, "a.txt", "a1\n")
    write(root, "b.txt", "b1\n")
    write(root, ".gitignore", "out/\n")
    write(root, "out/gen.txt", "generated\n")
    return root
