"""Table-driven: every catastrophic form is refused, no ordinary developer command is."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_ls.engine.safety import check_command
from security.corpus import ORDINARY, dangerous

ROOT = Path("/work/ws-corpus/proj")
HOME = Path("/work/ws-corpus")  # the workspace's parent is "home", like ~/proj


def check(command: str) -> str | None:
    return check_command(command, ROOT, cwd=ROOT, home=HOME)


def test_the_corpus_is_large_enough():
    assert len(dangerous()) >= 300 and len(set(dangerous())) == len(dangerous())
    assert len(ORDINARY) >= 100


@pytest.mark.parametrize("command", dangerous())
def test_dangerous_form_is_refused(command):
    assert check(command), command


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_command_runs(command):
    assert check(command) is None
