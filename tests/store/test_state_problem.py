"""`state_problem`: the one probe of `<root>/.coder/` behind the server's degraded mode."""

from __future__ import annotations

from pathlib import Path

from coder_ls.store.gitignore import ensure_state_dir, state_problem


def test_a_writable_workspace_has_no_problem_and_keeps_no_probe(tmp_path: Path) -> None:
    assert state_problem(tmp_path) is None
    state = tmp_path / ".coder"
    assert (state / "sessions").is_dir() and (state / "checkpoints").is_dir()
    assert not [p for p in state.rglob(".probe-*")]


def test_a_missing_workspace_is_a_problem_and_is_not_created(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    problem = state_problem(gone)
    assert problem is not None and str(gone) in problem
    assert not gone.exists()


def test_ensure_state_dir_never_creates_the_workspace(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    try:
        ensure_state_dir(gone)
    except FileNotFoundError:
        pass
    assert not gone.exists()


def test_a_state_folder_that_is_a_file_is_a_problem(tmp_path: Path) -> None:
    (tmp_path / ".coder").write_text("not a folder")
    problem = state_problem(tmp_path)
    assert problem is not None and ".coder" in problem
    assert (tmp_path / ".coder").read_text() == "not a folder"  # nothing lost
