"""Fixtures for the provider tests: the fake Anthropic server on 127.0.0.1."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

FAKES = Path(__file__).resolve().parents[1] / "fakes"
if str(FAKES) not in sys.path:
    sys.path.insert(0, str(FAKES))

from anthropic_server import EXPECT_REJECTION, FakeAnthropicServer, check_rejections  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{EXPECT_REJECTION}: the fake Messages API may refuse requests in this test")


@pytest.fixture
def fake_anthropic(request: pytest.FixtureRequest) -> Iterator[FakeAnthropicServer]:
    """A running fake server with an empty script: `push()` responses, then point a
    provider at `.url`. Strict: the test fails if it refused a request the real API
    would refuse, unless marked `expect_rejection`."""
    with FakeAnthropicServer() as server:
        yield server
        check_rejections(server, request.node.get_closest_marker(EXPECT_REJECTION) is not None)
