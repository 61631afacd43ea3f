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
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from agent_e2e import APP, api_env
from anthropic_server import FakeAnthropicServer
from harness import Session, full_caps, init_git, lsp_session
from lsprotocol import types


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
    s.answer_question = lambda p: None
    s.answer_edit = lambda p: types.ApplyWorkspaceEditResult(applied=True)


def clear_fake(server: FakeAnthropicServer) -> None:
    with server._lock:
        server._queue.clear()
    server.requests.clear()


@pytest.fixture
def fake() -> Iterator[FakeAnthropicServer]:
    """A fake Messages API with an empty script: `push()` the replies a test needs."""
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A small git workspace of one's own: app.py and README.md."""
    return init_git(tmp_path / "ws", {"app.py": APP, "README.md": "# demo\n"})


@pytest.fixture(scope="package")
def shared_fake() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


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
