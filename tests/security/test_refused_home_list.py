"""One home list: every path the agent's sandbox keeps read-only in the user's home
(`protected.HOME_PROTECTED`) is refused to a `!` line that writes it, whether the line names
the entry or something beneath it, by redirection or by a well-known tool; an ordinary file
beside them is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_ls.guard.protected import HOME_PROTECTED
from coder_ls.guard.safety import check_command


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.mark.parametrize("entry", sorted(HOME_PROTECTED))
def test_each_entry_of_the_home_list_is_refused(root: Path, entry: str) -> None:
    for line in (f"echo x >> ~/{entry}", f"cp evil ~/{entry}/x", f"tee -a ~/{entry} < evil"):
        assert check_command(line, root, cwd=root, env={"HOME": str(root.parent / "home")}), line


def test_an_ordinary_file_in_the_home_is_written(root: Path) -> None:
    env = {"HOME": str(root.parent / "home")}
    for line in ("echo x >> ~/notes.txt", "cp report.pdf ~/Downloads/", "echo x > ~/.cache/tool/state"):
        assert check_command(line, root, cwd=root, env=env) is None, line
