"""Helpers for the checkpoint tests: run the user's git, write files, capture repo state."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def git(root: Path, *args: str, check: bool = True) -> str:
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    run = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True, check=False)
    if check and run.returncode != 0:
        raise AssertionError(f"git {args} failed: {run.stderr}")
    return run.stdout


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def user_git_state(root: Path) -> dict[str, object]:
    """Everything about the user's repo that checkpoints must never change."""
    git_dir = root / ".git"
    state: dict[str, object] = {
        "index": (git_dir / "index").read_bytes(),
        "HEAD": (git_dir / "HEAD").read_bytes(),
        "config": (git_dir / "config").read_bytes(),
    }
    state["log"] = git(root, "log", "--all", "--format=%H %s")
    state["refs"] = git(root, "for-each-ref")
    state["stash"] = git(root, "stash", "list")
    state["status"] = git(root, "status", "--porcelain=v1", "--untracked-files=all")
    state["reflog"] = git(root, "reflog", "--all")
    return state
