"""Fixtures of the ACP end-to-end tests: the strict fake Messages API and a git workspace.

Every test starts the real `python -m coder_ls --acp` through the SDK's client side
(acp_support.py); a test during which the fake refused a request fails at teardown."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_e2e import APP
from anthropic_server import EXPECT_REJECTION, FakeAnthropicServer, check_rejections
from harness import init_git


@pytest.fixture
def fake(request: pytest.FixtureRequest) -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server
        check_rejections(server, request.node.get_closest_marker(EXPECT_REJECTION) is not None)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return init_git(tmp_path / "ws", {"app.py": APP, "README.md": "# demo\n"})
