"""Fixtures for the agent end-to-end tests: a fake Anthropic endpoint and workspaces.

The real coder-ls runs as a subprocess (tests/harness.py) with the real Anthropic SDK
pointed at `FakeAnthropicServer` (tests/fakes/anthropic_server.py) through
ANTHROPIC_BASE_URL.

Starting a server and importing the SDK in it costs seconds, so most tests share one
server (`agent` fixture, full client capabilities): each test gets a fresh session
(`/new`), its own configuration (`workspace/didChangeConfiguration`, which replaces the
previous test's), an empty fake-server script and empty event/edit/question lists.
Tests that need other client capabilities, another environment or a server restart
start their own with `lsp_session(...)` and the function-scoped `fake`.

Every module here runs in the package's event loop:
`pytestmark = pytest.mark.asyncio(loop_scope="package")`.

The fake refuses what the real Messages API refuses (tests/fakes/anthropic_rules.py);
a test during which it refused a request fails at teardown, unless it is marked
`@pytest.mark.expect_rejection`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from agent_e2e import APP, api_env
from anthropic_server import EXPECT_REJECTION, FakeAnthropicServer, check_rejections
from harness import Session, full_caps, init_git, lsp_session
from lsprotocol import types


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{EXPECT_REJECTION}: the fake Messages API may refuse requests in this test")


def expects_rejection(request: pytest.FixtureRequest) -> bool:
    return request.node.get_closest_marker(EXPECT_REJECTION) is not None


def fix_code_action_structure(session: Session) -> None:
    """lsprotocol 2025.0.0 structures a `Command | CodeAction` whose `command` is an
    object as a `Command` (with the object as a string): choose by the field's type."""
    converter = session.client.protocol._converter
    union: Any = types.Command | types.CodeAction

    def structure(obj: Any, _: Any) -> Any:
        if isinstance(obj, dict) and isinstance(obj.get("command"), str):
            return converter.structure(obj, types.Command)
        return converter.structure(obj, types.CodeAction)

    converter.register_structure_hook(union, structure)


def reset_client(s: Session) -> None:
    s.events.clear()
    s.edits.clear()
    s.questions.clear()
    s.client.shown_documents.clear()  # window/showDocument (pytest-lsp answers success)
    s.answer_question = lambda p: None
    s.answer_edit = lambda p: types.ApplyWorkspaceEditResult(applied=True)


def clear_fake(server: FakeAnthropicServer) -> None:
    with server._lock:
        server._queue.clear()
    server.requests.clear()
    server.counted.clear()
    server.count_status = 200


@pytest.fixture
def fake(request: pytest.FixtureRequest) -> Iterator[FakeAnthropicServer]:
    """A fake Messages API with an empty script: `push()` the replies a test needs."""
    with FakeAnthropicServer() as server:
        yield server
        check_rejections(server, expects_rejection(request))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A small git workspace of one's own: app.py and README.md."""
    return init_git(tmp_path / "ws", {"app.py": APP, "README.md": "# demo\n"})


@pytest.fixture(scope="package")
def shared_fake() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture(autouse=True)
def no_refused_requests(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a test when the shared fake refused a request during it."""
    if "shared_fake" not in request.fixturenames:
        yield
        return
    server: FakeAnthropicServer = request.getfixturevalue("shared_fake")
    server.take_rejections()  # a previous test's leftovers are that test's business
    yield
    check_rejections(server, expects_rejection(request))


@pytest_asyncio.fixture(scope="package", loop_scope="package")
async def shared_session(
    tmp_path_factory: pytest.TempPathFactory, shared_fake: FakeAnthropicServer
) -> AsyncIterator[Session]:
    root = init_git(tmp_path_factory.mktemp("shared") / "ws", {"app.py": APP, "README.md": "# demo\n"})
    async with lsp_session(root, caps=full_caps(), env=api_env(shared_fake)) as s:
        fix_code_action_structure(s)
        yield s


class Agent:
    """The shared server, set up for one test."""

    def __init__(self, s: Session, fake: FakeAnthropicServer) -> None:
        self.s, self.fake, self.root = s, fake, s.root

    async def configure(self, settings: dict[str, Any]) -> None:
        clear_fake(self.fake)
        self.s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"coder": settings})
        )
        result = await self.s.execute("coder.new", {})
        assert result["status"] == "completed", result
        reset_client(self.s)

    async def turn(self, text: str, **extra: Any) -> dict[str, Any]:
        result: dict[str, Any] = await self.s.execute("coder.input", {"text": text, **extra})
        return result


@pytest_asyncio.fixture(loop_scope="package")
async def agent(
    shared_session: Session, shared_fake: FakeAnthropicServer
) -> AsyncIterator[Callable[..., Awaitable[Agent]]]:
    """`a = await agent(permissions="yolo", maxSteps=2)`: the shared server, a new session,
    these settings (balanced by default), an empty script."""

    async def use(**settings: Any) -> Agent:
        a = Agent(shared_session, shared_fake)
        await a.configure({"permissions": "balanced", **settings})
        return a

    yield use
    clear_fake(shared_fake)
    reset_client(shared_session)
