"""What the engine needs from the editor. The LSP edge implements it; tests fake it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Protocol

import msgspec

from coder_ls.engine.eyes import EditorEyes
from coder_ls.protocol.ask import AskAnswer, AskQuestion
from coder_ls.protocol.edits import EditOutcome, EditRequest, Finding
from coder_ls.protocol.events import Event

MessageKind = Literal["error", "warning", "info", "log"]


class ClientCaps(msgspec.Struct, frozen=True):
    """The client's capabilities, resolved once at initialize into plain booleans."""

    work_done_progress: bool = False
    apply_edit: bool = False
    document_changes: bool = False
    resource_create: bool = False
    show_message_request: bool = False
    change_annotations: bool = False  # workspaceEdit.changeAnnotationSupport (edits reviewed in the editor)
    ask_user: bool = False  # the client answers `coder/askUser` with its own UI (section 19)
    show_document: bool = False  # window.showDocument.support (LSP 3.16)
    notify: bool = False  # the client shows `coder/notify` itself (section 22)
    diagnostics: bool = False  # the client answers `coder/diagnostics` (section 23)
    language_query: bool = False  # the client answers `coder/languageQuery` (section 23)


class OpenDocument(msgspec.Struct, frozen=True):
    text: str
    version: int | None


class Host(Protocol):
    @property
    def caps(self) -> ClientCaps: ...

    def emit(self, event: Event) -> None:
        """Send an event (already stamped with ids and seq) to the client."""

    def show_message(self, kind: MessageKind, message: str) -> None: ...

    async def ask(self, kind: MessageKind, message: str, choices: list[str]) -> str | None:
        """`window/showMessageRequest`: the chosen title, or None if dismissed."""

    async def apply_edit(self, request: EditRequest) -> EditOutcome: ...

    async def ask_user(self, submission_id: str, questions: list[AskQuestion]) -> list[AskAnswer] | None:
        """The user's answers to the model's questions, one per question, or None when
        they dismissed them (or the client cannot ask)."""

    def open_document(self, path: Path) -> OpenDocument | None:
        """The editor's buffer for `path` when the document is open (unsaved text)."""

    def open_paths(self) -> Sequence[Path]:
        """The files whose documents are open in the editor (`file://` documents only; any
        other URI names no file): what a search over many files (grep) checks against
        `open_document` for unsaved text."""

    async def fetch_documents(self, paths: Sequence[Path]) -> None:
        """Before a tool call reads or edits `paths`: make the editor's unsaved buffers of
        them visible to `open_document`. Over LSP the client pushes them (didOpen/didChange):
        nothing to do; over ACP they are asked for (`fs/read_text_file`)."""

    async def begin_progress(self, submission_id: str, title: str, message: str) -> None:
        """Start cancellable work-done progress for a long submission (no-op without support)."""

    def report_progress(self, submission_id: str, message: str, percentage: int | None = None) -> None:
        """A `report` on the submission's work-done progress (no-op without one)."""

    def end_progress(self, submission_id: str, message: str) -> None:
        """`end` with `Done`, `Cancelled` or `Failed: ...`."""

    async def show_document(self, path: Path) -> bool:
        """Open `path` in the editor (`window/showDocument`); False when the client cannot
        or did not."""
        ...

    def publish_findings(self, findings: Sequence[Finding]) -> None:
        """`/review`'s findings as diagnostics (source `coder`), replacing the previous
        review's everywhere (a file without findings now gets an empty list)."""

    def eyes(self) -> EditorEyes | None:
        """The editor's diagnostics and language queries (section 23), or None when the
        client declared neither."""


class NullHost:
    """A host that drops everything: for unit tests and headless use."""

    def __init__(self, caps: ClientCaps | None = None) -> None:
        self._caps = caps or ClientCaps()
        self.events: list[Event] = []
        self.messages: list[tuple[MessageKind, str]] = []
        self.progress: list[tuple[str, str]] = []
        self.findings: list[Finding] = []

    @property
    def caps(self) -> ClientCaps:
        return self._caps

    def emit(self, event: Event) -> None:
        self.events.append(event)

    def show_message(self, kind: MessageKind, message: str) -> None:
        self.messages.append((kind, message))

    async def ask(self, kind: MessageKind, message: str, choices: list[str]) -> str | None:
        return None

    async def ask_user(self, submission_id: str, questions: list[AskQuestion]) -> list[AskAnswer] | None:
        return None

    async def apply_edit(self, request: EditRequest) -> EditOutcome:
        return EditOutcome(applied=False, reason="no editor")

    def open_document(self, path: Path) -> OpenDocument | None:
        return None

    def open_paths(self) -> Sequence[Path]:
        return ()

    async def show_document(self, path: Path) -> bool:
        return False

    async def fetch_documents(self, paths: Sequence[Path]) -> None:
        return None

    def publish_findings(self, findings: Sequence[Finding]) -> None:
        self.findings = list(findings)

    def eyes(self) -> EditorEyes | None:
        return None

    async def begin_progress(self, submission_id: str, title: str, message: str) -> None:
        self.progress.append((submission_id, f"begin: {title}: {message}"))

    def report_progress(self, submission_id: str, message: str, percentage: int | None = None) -> None:
        self.progress.append((submission_id, message))

    def end_progress(self, submission_id: str, message: str) -> None:
        self.progress.append((submission_id, f"end: {message}"))
