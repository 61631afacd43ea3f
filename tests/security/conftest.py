"""Fixtures the sandbox tests share (bubblewrap and Landlock alike)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from anthropic_server import FakeAnthropicServer  # tests/fakes is on the path (tests/conftest.py)


@pytest.fixture
def fake() -> Iterator[FakeAnthropicServer]:
    """A fake Messages API (a module's own `fake` fixture takes precedence)."""
    with FakeAnthropicServer() as f:
        yield f


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory outside the workspace and outside /tmp (bubblewrap gives the sandbox its own /tmp)."""
    path = Path(tempfile.mkdtemp(prefix="coder-sbx-test-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)
