"""Fixtures for the provider tests: the fake Anthropic server on 127.0.0.1."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

FAKES = Path(__file__).resolve().parents[1] / "fakes"
if str(FAKES) not in sys.path:
    sys.path.insert(0, str(FAKES))

from anthropic_server import FakeAnthropicServer  # noqa: E402


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropicServer]:
    """A running fake server with an empty script: `push()` responses, then point a
    provider at `.url`."""
    with FakeAnthropicServer() as server:
        yield server
