"""One MCP server, one connection, its whole life: start, ready, crash, restart, close.

The connection lives in one asyncio task (the SDK's transports and `ClientSession` are
context managers that must be entered and left by the same task): it starts the server
(stdio through `reaper.py`, or streamable HTTP/SSE), initializes within the start timeout,
lists the tools, prompts and resources, and then waits for one of: `close()`, a
`reconnect()`, the end of the server's stream (it exited or the HTTP session died), or a
`list_changed` notification (the lists are fetched again). A server that fails or dies is
started again after a backoff (0.5 s doubling to 30 s, at most `MAX_RESTARTS` times in a
row); meanwhile its state says so and its tools answer "unavailable".

Tool calls run in the caller's task on the live session: cancelling the caller (the
user's Cancel) makes the SDK send `notifications/cancelled` for the request.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from coder_ls.mcp.config import McpServerSpec

if TYPE_CHECKING:
    from mcp.client.session import ClientSession

log = logging.getLogger(__name__)

State = Literal["stopped", "starting", "ready", "restarting", "failed"]
MAX_RESTARTS = 5
DEFAULT_START_TIMEOUT = 30.0  # seconds; MCP_TIMEOUT (ms, as Claude Code reads it) overrides
REAPER = Path(__file__).with_name("reaper.py")


class ToolInfo(msgspec.Struct, frozen=True):
    name: str
    description: str
    input_schema: dict[str, Any]  # the server's JSON Schema, as it sent it
    read_only: bool = False  # `annotations.readOnlyHint`: what plan mode lets run


class PromptArg(msgspec.Struct, frozen=True):
    name: str
    description: str = ""
    required: bool = False


class PromptInfo(msgspec.Struct, frozen=True):
    name: str
    description: str
    arguments: tuple[PromptArg, ...] = ()


class ResourceInfo(msgspec.Struct, frozen=True):
    uri: str
    name: str
    description: str = ""
    mime_type: str = ""


class McpUnavailable(Exception):
    """The server is not connected (starting, restarting, failed, or waiting for /trust)."""


ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]


def start_timeout(env: Mapping[str, str]) -> float:
    raw = env.get("MCP_TIMEOUT", "")
    try:
        return max(0.1, float(raw) / 1000) if raw else DEFAULT_START_TIMEOUT
    except ValueError:
        return DEFAULT_START_TIMEOUT


class McpConnection:
    def __init__(
        self,
        spec: McpServerSpec,
        child_env: Mapping[str, str],
        *,
        cwd: Path,
        timeout: float = DEFAULT_START_TIMEOUT,
        on_change: Callable[[McpConnection], None] = lambda c: None,
    ) -> None:
        self.spec = spec
        self._child_env = dict(child_env)
        self._cwd = cwd
        self.timeout = timeout
        self._on_change = on_change
        self.state: State = "stopped"
        self.last_error = ""
        self.tools: tuple[ToolInfo, ...] = ()
        self.prompts: tuple[PromptInfo, ...] = ()
        self.resources: tuple[ResourceInfo, ...] = ()
        self.restarts = 0
        self.started_at = 0.0
        self.stderr_tail = ""
        self._errlog: Any = None
        self._session: ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()  # set (and replaced) at every change of state
        self._attempting = False  # a connection attempt is under way
        self._wake = asyncio.Event()  # reconnect, close, stream end, list_changed
        self._closing = False
        self._reconnect = False
        self._stale = False

    @property
    def name(self) -> str:
        return self.spec.name

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> None:
        """Begin connecting in the background (nothing is awaited here)."""
        if self._task is None or self._task.done():
            self._closing = False
            self._attempting = True
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"mcp:{self.name}")

    async def wait_ready(self, timeout: float | None = None, *, through_backoff: bool = False) -> bool:
        """Start if needed and wait, at most the start timeout, for the attempt under way to
        end; `through_backoff`: also for the next attempt of a server waiting to restart (a
        call to it), rather than answering at once that it is not there (a turn's tool list)."""
        self.start()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (self.timeout if timeout is None else timeout)
        while self.state != "ready":
            if self.state == "failed" or (not self._attempting and not through_backoff):
                return False
            changed = self._changed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), max(0.0, deadline - loop.time()))
            if loop.time() >= deadline:
                break
        return self.state == "ready"

    def reconnect(self) -> None:
        self.restarts = 0
        self._reconnect = True
        self._wake.set()
        if self._task is None or self._task.done():
            self.start()

    async def close(self) -> None:
        self._closing = True
        self._wake.set()
        task, self._task = self._task, None
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(asyncio.shield(task), 5)
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._set("stopped")

    def _set(self, state: State, error: str | None = None) -> None:
        self.state = state
        if error is not None:
            self.last_error = error
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()
        self._on_change(self)

    async def _run(self) -> None:
        await asyncio.to_thread(load_sdk)  # ~2 s of imports: never on the event loop
        failures = 0
        while not self._closing:
            self._reconnect = False
            self._attempting = True
            self._set("starting" if failures == 0 else "restarting")
            self.started_at = time.monotonic()
            try:
                await self._serve()
                failures = 0 if self._reconnect or self._closing else failures + 1
                if not self._closing and not self._reconnect:
                    self.last_error = "the server closed the connection"
            except asyncio.CancelledError:
                raise
            except BaseException as exc:
                failures += 1
                self.last_error = _describe(exc)
                if self.stderr_tail:
                    self.last_error += f" (stderr: {self.stderr_tail[-300:]})"
                log.info("MCP server %s failed: %s", self.name, self.last_error)
            self._session = None
            self._attempting = False
            if self._closing:
                break
            if self._reconnect:
                continue
            self.restarts += 1
            if failures > MAX_RESTARTS:
                self._set("failed")
                self._wake.clear()
                await self._wake.wait()  # until /mcp reconnect or close
                failures = 0
                continue
            self._set("restarting")
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), min(30.0, 0.5 * 2 ** (failures - 1)))

    async def _serve(self) -> None:
        from mcp.client.session import ClientSession

        async with self._transport() as (read, write):
            ended = asyncio.Event()
            relay_read, relay_write = _relay(read, ended, self._wake)
            async with relay_write, ClientSession(relay_read, write, message_handler=self._on_message) as session:
                await asyncio.wait_for(self._initialize(session), self.timeout)
                self._session = session
                self._set("ready", "")
                while not self._closing and not self._reconnect and not ended.is_set():
                    self._wake.clear()
                    if self._stale:
                        self._stale = False
                        await self._list(session)
                        self._on_change(self)
                        continue
                    await self._wake.wait()
                self._session = None

    async def _initialize(self, session: ClientSession) -> None:
        await session.initialize()
        await self._list(session)

    async def _list(self, session: ClientSession) -> None:
        caps = session.server_capabilities
        tools: list[ToolInfo] = []
        prompts: list[PromptInfo] = []
        resources: list[ResourceInfo] = []
        if caps is None or caps.tools is not None:
            for t in (await session.list_tools()).tools:
                notes = t.annotations  # `readOnlyHint` on the wire: `read_only_hint` in newer SDKs
                hint = getattr(notes, "read_only_hint", getattr(notes, "readOnlyHint", None)) if notes else None
                tools.append(ToolInfo(t.name, t.description or "", dict(t.input_schema), hint is True))
        if caps is not None and caps.prompts is not None:
            for p in (await session.list_prompts()).prompts:
                args = tuple(PromptArg(a.name, a.description or "", bool(a.required)) for a in (p.arguments or []))
                prompts.append(PromptInfo(p.name, p.description or "", args))
        if caps is not None and caps.resources is not None:
            for r in (await session.list_resources()).resources:
                resources.append(ResourceInfo(str(r.uri), r.name, r.description or "", r.mime_type or ""))
        self.tools, self.prompts, self.resources = tuple(tools), tuple(prompts), tuple(resources)

    async def _on_message(self, message: Any) -> None:
        method = getattr(message, "method", "")
        if method in (
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
        ):
            self._stale = True
            self._wake.set()

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[tuple[Any, Any]]:
        spec = self.spec
        if spec.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            params = StdioServerParameters(
                command=sys.executable,
                args=["-I", str(REAPER), "--parent", str(os.getpid()), spec.command, *spec.args],
                env={**self._child_env, **dict(spec.env)},
                cwd=str(self._cwd),
            )
            with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
                self._errlog = errlog
                try:
                    async with stdio_client(params, errlog=errlog) as streams:
                        yield streams
                finally:
                    self._errlog = None
                    self.stderr_tail = _tail(errlog)
            return
        if spec.transport == "sse":
            from mcp.client.sse import sse_client

            async with sse_client(spec.url, headers=dict(spec.headers)) as streams:
                yield streams[0], streams[1]
            return
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        client = httpx2.AsyncClient(headers=dict(spec.headers), timeout=httpx2.Timeout(30.0, read=300.0))
        async with client, streamable_http_client(spec.url, http_client=client) as streams:
            yield streams[0], streams[1]

    # -- requests -----------------------------------------------------------------------------
    def session(self) -> ClientSession:
        if self.state != "ready" or self._session is None:
            why = f": {self.last_error}" if self.last_error else ""
            raise McpUnavailable(f"MCP server {self.name!r} is {self.state}{why}")
        return self._session

    async def call_tool(self, name: str, arguments: dict[str, Any], progress: ProgressFn | None = None) -> Any:
        from mcp_types import CallToolResult

        if self.state in ("starting", "restarting"):
            await self.wait_ready(through_backoff=True)  # a server coming back: its start timeout at most
        result = await self.session().call_tool(name, arguments, progress_callback=progress)  # type: ignore[arg-type]
        if not isinstance(result, CallToolResult):
            raise McpUnavailable(f"{name}: the server answered with {type(result).__name__}, not a tool result")
        return result

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> Any:
        return await self.session().get_prompt(name, arguments)

    async def read_resource(self, uri: str) -> Any:
        return await self.session().read_resource(uri)


def load_sdk() -> None:
    """Import the SDK (and jsonschema, which the tool adapter uses) in a worker thread: the
    first server's start must not stall the LSP's event loop for the ~2 s it takes."""
    import jsonschema  # noqa: F401
    import mcp.client.session
    import mcp.client.sse
    import mcp.client.stdio
    import mcp.client.streamable_http  # noqa: F401


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions[:3])
    if isinstance(exc, TimeoutError):
        return "it did not answer initialize within the start timeout"
    text = str(exc) or type(exc).__name__
    return text[:500]


def _tail(errlog: Any, limit: int = 2000) -> str:
    """The end of what a stdio server wrote to stderr (it goes to a file of its own: our
    stderr is the LSP client's log, which a chatty server must not fill)."""
    try:
        errlog.seek(0, 2)
        size = errlog.tell()
        errlog.seek(max(0, size - limit))
        return str(errlog.read()).strip()
    except (OSError, ValueError):
        return ""


def _relay(read: Any, ended: asyncio.Event, wake: asyncio.Event) -> tuple[Any, Any]:
    """A stream between the transport and the session that notices the transport's end (the
    server exited): the SDK's dispatcher only stops; the connection must restart."""
    import anyio

    send, receive = anyio.create_memory_object_stream[Any](0)

    class _Relay:
        async def __aenter__(self) -> _Relay:
            self._task = asyncio.get_running_loop().create_task(self._pump())
            return self

        async def _pump(self) -> None:
            try:
                async with send:
                    async for item in read:
                        await send.send(item)
            except Exception:
                pass
            finally:
                ended.set()
                wake.set()

        async def __aexit__(self, *exc: object) -> None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task

    return receive, _Relay()
