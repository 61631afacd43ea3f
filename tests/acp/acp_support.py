"""An ACP client for the end-to-end tests: the official SDK's CLIENT side driving the real
`python -m coder_ls --acp` as a subprocess (stdio), with the real Anthropic SDK inside it
pointed at the strict fake Messages API (tests/fakes/anthropic_server.py).

`RecordingClient` keeps every `session/update` per session, answers
`session/request_permission` through `answer` (a function of the request returning an
option name, or None for the `cancelled` outcome), and, when the test offers `fs`, plays an
editor: `fs/read_text_file` serves `buffers` (unsaved text) before the disk, and
`fs/write_text_file` lands in `buffers` (and on disk when `save_on_write`).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)
from harness import server_env

AGENT = [sys.executable, "-m", "coder_ls", "--acp"]


@dataclass
class RecordingClient:
    answer: Callable[[Any], str | None] = lambda request: None
    buffers: dict[str, str] = field(default_factory=dict)
    save_on_write: bool = True
    updates: dict[str, list[Any]] = field(default_factory=dict)
    questions: list[Any] = field(default_factory=list)
    writes: list[tuple[str, str]] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)

    # -- the Client interface ---------------------------------------------------------------
    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.setdefault(session_id, []).append(update)

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.questions.append((tool_call, options))
        result = self.answer((tool_call, options))
        if asyncio.iscoroutine(result):
            result = await result
        if result is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        (chosen,) = [o for o in options if o.name == result]
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=chosen.option_id))

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        self.reads.append(path)
        text = self.buffers.get(path)
        if text is None:
            text = await asyncio.to_thread(Path(path).read_text)
        return ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content
        if self.save_on_write:
            await asyncio.to_thread(Path(path).write_text, content)
        return WriteTextFileResponse()

    def on_connect(self, conn: Any) -> None:
        pass

    # -- reading what was shown -------------------------------------------------------------
    def of(self, session_id: str, kind: str) -> list[Any]:
        return [u for u in self.updates.get(session_id, []) if u.session_update == kind]

    def text(self, session_id: str, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(session_id, kind) if getattr(u.content, "text", None))

    def clear(self) -> None:
        self.updates.clear()
        self.questions.clear()
        self.writes.clear()
        self.reads.clear()


@dataclass
class Agent:
    conn: ClientSideConnection
    client: RecordingClient
    process: asyncio.subprocess.Process
    root: Path
    init: Any = None


@contextlib.asynccontextmanager
async def acp_agent(
    root: Path,
    env: dict[str, str] | None = None,
    *,
    fs: bool = False,
    client: RecordingClient | None = None,
    meta: dict[str, Any] | None = None,
) -> AsyncIterator[Agent]:
    """The real agent over stdio, initialized (fs offered or not; `meta`: initialize's `_meta`)."""
    client = client or RecordingClient()
    log = root.parent / f"acp-{root.name}.stderr"
    with open(log, "ab") as stderr:  # noqa: ASYNC230 (once, before the agent starts)
        async with spawn_agent_process(
            client, *AGENT, env=server_env(root, env), cwd=str(root), transport_kwargs={"stderr": stderr.fileno()}
        ) as (conn, process):
            caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs), terminal=False)
            init = await asyncio.wait_for(
                conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps, **(meta or {})), 30
            )
            yield Agent(conn, client, process, root, init)


async def wait_for(predicate: Callable[[], Any], timeout: float = 10.0) -> Any:
    async def loop() -> Any:
        while not (value := predicate()):  # noqa: ASYNC110 (a predicate, not an event)
            await asyncio.sleep(0.02)
        return value

    return await asyncio.wait_for(loop(), timeout)
