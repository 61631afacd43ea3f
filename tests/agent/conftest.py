"""Fakes for the agent's unit tests: a host recording edits and questions, a shell."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from coder_ls.agent.tools.base import ToolContext
from coder_ls.engine.host import ClientCaps, OpenDocument
from coder_ls.protocol.config import Config
from coder_ls.protocol.edits import EditOutcome, EditRequest
from coder_ls.protocol.events import Event


class FakeHost:
    def __init__(
        self,
        *,
        apply_edit: bool = True,
        applied: bool = True,
        reason: str | None = None,
        answer: str | None = None,
    ) -> None:
        self._caps = ClientCaps(apply_edit=apply_edit, document_changes=True, show_message_request=True)
        self.applied = applied
        self.reason = reason
        self.answer = answer
        self.block_ask = False
        self.asked: list[tuple[str, str, list[str]]] = []
        self.asking = asyncio.Event()
        self.edits: list[EditRequest] = []
        self.docs: dict[Path, OpenDocument] = {}
        self.events: list[Event] = []

    @property
    def caps(self) -> ClientCaps:
        return self._caps

    def eyes(self) -> None:
        return None

    def emit(self, event: Event) -> None:
        self.events.append(event)

    def show_message(self, kind: str, message: str) -> None:
        pass

    async def ask(self, kind: str, message: str, choices: list[str]) -> str | None:
        self.asked.append((kind, message, choices))
        self.asking.set()
        if self.block_ask:
            await asyncio.Event().wait()
        return self.answer

    async def apply_edit(self, request: EditRequest) -> EditOutcome:
        self.edits.append(request)
        return EditOutcome(applied=self.applied, reason=self.reason)

    def open_document(self, path: Path) -> OpenDocument | None:
        return self.docs.get(path)

    def open_paths(self) -> list[Path]:
        return list(self.docs)

    async def fetch_documents(self, paths: object) -> None:
        return None

    def report_progress(self, submission_id: str, message: str) -> None:
        pass


class FakeResult(msgspec.Struct, frozen=True):
    output: str
    exit_code: int | None
    truncated: bool = False
    timed_out: bool = False
    cwd: str = ""


class FakeShell:
    def __init__(self, result: FakeResult | None = None, chunks: tuple[str, ...] = ()) -> None:
        self.result = result or FakeResult("hello\n", 0)
        self.chunks = chunks
        self.calls: list[dict[str, Any]] = []

    async def run(
        self,
        command: str,
        *,
        on_output: Callable[[str], None],
        timeout: float,
        max_output_bytes: int,
    ) -> FakeResult:
        self.calls.append({"command": command, "timeout": timeout, "max_output_bytes": max_output_bytes})
        for chunk in self.chunks:
            on_output(chunk)
        return self.result


class Harness:
    """One workspace, host, shell and context, with what the tools emitted and reported."""

    def __init__(self, root: Path, host: FakeHost, config: Config) -> None:
        self.root = root
        self.host = host
        self.shell = FakeShell()
        self.events: list[Event] = []
        self.reports: list[str] = []
        self.config = config
        self.ctx = self.new_ctx()

    def new_ctx(self) -> ToolContext:
        return ToolContext(
            root=self.root,
            config=self.config,
            host=self.host,
            shell=self.shell,
            emit=self.events.append,
            report=self.reports.append,
            call_id="call-1",
        )

    def of(self, kind: type[Event]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def harness(workspace: Path) -> Harness:
    return Harness(workspace, FakeHost(), Config())


@pytest.fixture
def make_harness(workspace: Path) -> Callable[..., Harness]:
    def make(config: Config | None = None, **host_kwargs: Any) -> Harness:
        return Harness(workspace, FakeHost(**host_kwargs), config or Config())

    return make
