"""`.coder/.gitignore`: checked with a real `git status` in a temporary repository."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from coder_ls.store.gitignore import GITIGNORE_TEXT, ensure_state_dir, state_paths, write_state_file
from coder_ls.store.index import SessionIndex
from coder_ls.store.log import SessionLog

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "core.excludesFile=/dev/null", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def untracked(repo: Path) -> set[str]:
    out = git(repo, "status", "--porcelain", "--untracked-files=all")
    return {line[3:] for line in out.splitlines()}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    return tmp_path


def test_only_user_curated_files_are_visible_to_git(repo: Path) -> None:
    state = ensure_state_dir(repo)
    assert state == repo / ".coder"
    # everything the server writes
    with SessionLog.create(repo, "abc", str(repo)) as log:
        log.sync()
    SessionIndex(repo).close()
    (state / "checkpoints" / "sub1").mkdir(parents=True)
    (state / "checkpoints" / "sub1" / "a.py").write_text("x")
    (state / "anything-else.log").write_text("x")
    # everything the user curates, nested included
    (state / "config.json").write_text("{}")
    for rel in ["commands/review.md", "commands/git/commit.md", "skills/pdf/SKILL.md", "agents/tester.md"]:
        (state / rel).parent.mkdir(parents=True, exist_ok=True)
        (state / rel).write_text("x")
    (repo / "main.py").write_text("print()")

    assert untracked(repo) == {
        "main.py",
        ".coder/config.json",
        ".coder/commands/review.md",
        ".coder/commands/git/commit.md",
        ".coder/skills/pdf/SKILL.md",
        ".coder/agents/tester.md",
    }


def test_first_write_creates_gitignore(repo: Path) -> None:
    SessionLog.create(repo, "s", str(repo)).close()
    assert (repo / ".coder" / ".gitignore").read_text() == GITIGNORE_TEXT
    assert untracked(repo) == set()  # the state, this .gitignore included, stays out of git


def test_existing_gitignore_is_left_alone(repo: Path) -> None:
    (repo / ".coder").mkdir()
    (repo / ".coder" / ".gitignore").write_text("# mine\n")
    ensure_state_dir(repo)
    assert (repo / ".coder" / ".gitignore").read_text() == "# mine\n"


def test_ensure_state_dir_is_idempotent(tmp_path: Path) -> None:
    first = ensure_state_dir(tmp_path)
    (first / ".gitignore").write_text(GITIGNORE_TEXT + "extra\n")
    assert ensure_state_dir(tmp_path) == first
    assert (first / ".gitignore").read_text().endswith("extra\n")


def test_layout_and_atomic_write(tmp_path: Path) -> None:
    paths = state_paths(tmp_path)
    assert paths.session_log("x") == tmp_path / ".coder" / "sessions" / "x.jsonl"
    assert paths.index_path.name == "index.sqlite" and paths.config_path.name == "config.json"
    assert not paths.state_dir.exists()  # pure
    ensure_state_dir(tmp_path)
    target = paths.config_path
    write_state_file(target, b"one")
    write_state_file(target, b"two")
    assert target.read_bytes() == b"two"
    assert [p.name for p in paths.state_dir.iterdir() if p.name.endswith(".tmp")] == []
