"""The `Host` of `coder-ls exec`: the engine's events on stdout, everything else on stderr.

stdout carries only the run's output: with `--json`, each event as one JSON object per line,
exactly the payload `coder/event` carries over LSP (a subagent's `agentId`/`parentCallId`
left out when it has none); without it, the answer's text and one short `> tool: what`
line per tool call. Notices, errors and the engine's messages go to stderr.

Nobody can answer a question here: `ask` and `ask_user` answer None (a dismissed
question: the call is denied, the model is told) at once and say on stderr what was
denied, so the run never waits on a terminal it does not have. Edits are written by the
engine itself (`apply_edit` is not a capability: the one writer is the server, as with an
editor that cannot apply edits), and recorded for `/undo` as any editor's are.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TextIO

import msgspec

from coder_ls.engine.eyes import EditorEyes
from coder_ls.engine.host import ClientCaps, MessageKind, OpenDocument
from coder_ls.protocol.ask import AskAnswer, AskQuestion
from coder_ls.protocol.edits import EditOutcome, EditRequest, Finding
from coder_ls.protocol.events import (
    AssistantMessage,
    ErrorEvent,
    Event,
    Notice,
    ShellOutput,
    ToolCallBegin,
    ToolCallEnd,
)

SUMMARY_CHARS = 100
_INPUT_KEYS = ("command", "path", "file_path", "pattern", "query", "url", "description", "prompt")


class Sink(Protocol):
    def event(self, event: Event) -> None: ...


class Stdout:
    """stdout, written and flushed at once; when its reader goes away (`| head -1`), the
    rest is dropped (fd 1 becomes /dev/null: no error at exit either) and `on_closed` runs
    once: the run ends its turn as on Ctrl-C, instead of failing inside the engine."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.closed = False
        self.on_closed: Callable[[], None] = lambda: None

    def write(self, text: str) -> None:
        if self.closed:
            return
        try:
            self.stream.write(text)
            self.stream.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.closed = True
            with contextlib.suppress(OSError, ValueError):
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, self.stream.fileno())
                os.close(null)
            self.on_closed()


def payload(event: Event) -> dict[str, Any]:
    """What `coder/event` carries for `event` (the LSP edge's `LspHost.emit`)."""
    data: dict[str, Any] = msgspec.to_builtins(event)
    if event.agent_id is None:
        data.pop("agentId", None)
        data.pop("parentCallId", None)
    return data


class JsonLines:
    """`--json`: one event per line, flushed at once (a pipe's reader sees each as it comes)."""

    def __init__(self, out: Stdout) -> None:
        self.out = out
        self._encoder = msgspec.json.Encoder()

    def event(self, event: Event) -> None:
        self.out.write(self._encoder.encode(payload(event)).decode("utf-8") + "\n")


def summarize(tool: str, input: dict[str, Any]) -> str:
    """`bash: npm test`, `edit: app.py`: the tool and the first telling field of its input."""
    what = next((input[k] for k in _INPUT_KEYS if isinstance(input.get(k), str) and input[k]), "")
    line = " ".join(str(what).split())
    if len(line) > SUMMARY_CHARS:
        line = line[: SUMMARY_CHARS - 1] + "…"
    return f"{tool}: {line}" if line else tool


class PlainText:
    """Without `--json`: the answer's text (each model step's, as it ends), a line per tool
    call of the main agent, a failed call's first line, and a `!shell` line's own output."""

    def __init__(self, out: Stdout, err: TextIO) -> None:
        self.out, self.err = out, err
        self._calls: set[str] = set()  # the main agent's tool calls still running
        self._said: set[str] = set()  # error messages already on stderr

    def event(self, event: Event) -> None:
        if event.agent_id is not None:
            return  # a subagent's work shows as its `task` call
        match event:
            case AssistantMessage(text=text):
                self._write(text if text.endswith("\n") else text + "\n")
            case ToolCallBegin(call_id=call_id, tool=tool, input=input):
                self._calls.add(call_id)
                self._write(f"> {summarize(tool, input)}\n")
            case ToolCallEnd(call_id=call_id, output=output, is_error=is_error):
                self._calls.discard(call_id)
                if is_error:
                    first = next((x for x in output.splitlines() if x.strip()), "failed")
                    self._write(f"  ! {first[:200]}\n")
            case ShellOutput(chunk=chunk) if not self._calls:  # `coder-ls exec '!make'`
                self._write(chunk)
            case ErrorEvent(message=message):
                self.say_error(message)
            case Notice(message=message):
                self.err.write(f"coder-ls: {message}\n")
                self.err.flush()

    def reply(self, text: str) -> None:
        """A /command's answer (it is the result's, not an event's)."""
        self._write(text if text.endswith("\n") else text + "\n")

    def say_error(self, message: str) -> None:
        if message not in self._said:
            self._said.add(message)
            self.err.write(f"coder-ls: error: {message}\n")
            self.err.flush()

    def _write(self, text: str) -> None:
        self.out.write(text)


class HeadlessHost:
    """The engine's `Host` for one `coder-ls exec` run."""

    def __init__(self, sink: Sink, err: TextIO) -> None:
        self.sink = sink
        self.err = err
        self._caps = ClientCaps()  # no editor: no edits applied, no questions, no progress
        self.denied: list[str] = []  # what would have been asked (said on stderr)
        self.findings: list[Finding] = []

    @property
    def caps(self) -> ClientCaps:
        return self._caps

    def emit(self, event: Event) -> None:
        self.sink.event(event)

    def show_message(self, kind: MessageKind, message: str) -> None:
        if kind != "log":
            self._say(f"{kind}: {message}" if kind in ("error", "warning") else message)

    async def ask(self, kind: MessageKind, message: str, choices: list[str]) -> str | None:
        first = message.strip().splitlines()[0] if message.strip() else "a question"
        self.denied.append(first)
        self._say(
            f"denied (nobody to ask in exec): {first} Allow it with --allow 'Tool(...)' or a wider --permissions."
        )
        return None

    async def ask_user(self, submission_id: str, questions: list[AskQuestion]) -> list[AskAnswer] | None:
        for q in questions:
            self.denied.append(q.question)
            self._say(f"not answered (nobody to ask in exec): {q.question}")
        return None

    async def apply_edit(self, request: EditRequest) -> EditOutcome:
        return EditOutcome(applied=False, reason="no editor")  # never asked: `caps.apply_edit` is False

    def open_document(self, path: Path) -> OpenDocument | None:
        return None

    def open_paths(self) -> Sequence[Path]:
        return ()

    async def fetch_documents(self, paths: Sequence[Path]) -> None:
        return None

    async def show_document(self, path: Path) -> bool:
        return False

    def eyes(self) -> EditorEyes | None:
        return None  # no editor's language servers to ask (contract section 23)

    def publish_findings(self, findings: Sequence[Finding]) -> None:
        self.findings = list(findings)

    async def begin_progress(self, submission_id: str, title: str, message: str) -> None:
        return None

    def report_progress(self, submission_id: str, message: str, percentage: int | None = None) -> None:
        return None

    def end_progress(self, submission_id: str, message: str) -> None:
        return None

    def _say(self, text: str) -> None:
        self.err.write(f"coder-ls: {text}\n")
        self.err.flush()
