"""LspHost: the engine's Host, implemented over a pygls server."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path, uri_scheme

from coder_ls.engine.edgewrite import refusal, write_inside
from coder_ls.engine.host import ClientCaps, MessageKind, OpenDocument
from coder_ls.lsp.attention import Attention
from coder_ls.lsp.edits import needs_disk_create, workspace_edit
from coder_ls.lsp.eyes import LspEyes
from coder_ls.lsp.plain import plain
from coder_ls.lsp.progress import ProgressManager
from coder_ls.lsp.protocol import CoderProtocol
from coder_ls.protocol.ask import AskAnswer, AskQuestion, AskUserParams, AskUserResult
from coder_ls.protocol.edits import EditOutcome, EditRequest, FileChange, Finding
from coder_ls.protocol.events import Event
from coder_ls.protocol.wiretext import carried, stray_surrogate
from coder_ls.saferead import read_text_or_none

log = logging.getLogger(__name__)

_KINDS = {
    "error": types.MessageType.Error,
    "warning": types.MessageType.Warning,
    "info": types.MessageType.Info,
    "log": types.MessageType.Log,
}
_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}
# How long a client may take, after answering a reviewed applyEdit, to send the copy it
# loaded of a file that was not open (VS Code: didOpen, then didChange).
LOADED_COPY_GRACE_SECONDS = 1.0
WITHDRAW_GRACE_SECONDS = 2.0  # how long a withdrawn applyEdit's last answer is waited for


def _declares(caps: types.ClientCapabilities, init_options: Any, own_key: str, experimental_key: str) -> bool:
    """`initializationOptions.capabilities.<own_key>`, or the experimental `<experimental_key>`."""
    experimental = caps.experimental if isinstance(caps.experimental, dict) else {}
    own = init_options.get("capabilities") if isinstance(init_options, dict) else None
    return bool(experimental.get(experimental_key)) or (isinstance(own, dict) and own.get(own_key) is True)


def resolve_caps(caps: types.ClientCapabilities, init_options: Any = None) -> ClientCaps:
    """The client's capabilities, once, as plain booleans."""
    ws = caps.workspace
    edit = ws.workspace_edit if ws else None
    window = caps.window
    return ClientCaps(
        work_done_progress=bool(window and window.work_done_progress),
        apply_edit=bool(ws and ws.apply_edit),
        document_changes=bool(edit and edit.document_changes),
        resource_create=bool(
            edit and edit.resource_operations and types.ResourceOperationKind.Create in edit.resource_operations
        ),
        show_message_request=True,  # window/showMessageRequest is in every LSP version
        change_annotations=bool(edit and edit.change_annotation_support is not None),
        ask_user=_declares(caps, init_options, "askUser", "coderAskUser"),
        notify=_declares(caps, init_options, "notify", "coderNotify"),
        diagnostics=_declares(caps, init_options, "diagnostics", "coderDiagnostics"),
        language_query=_declares(caps, init_options, "languageQuery", "coderLanguageQuery"),
        show_document=bool(window and window.show_document and window.show_document.support),
    )


def _disk_text(path: Path) -> str | None:
    return read_text_or_none(path, 64 * 1024 * 1024)  # a regular file only: a FIFO is never opened


async def _write_all(root: Path, files: list[tuple[str, str]]) -> EditOutcome:
    """The server's own writes of an edit (`edgewrite.write_inside`: never outside `root`),
    in a worker thread; the first failure stops them."""
    for path, text in files:
        if (failed := await asyncio.to_thread(write_inside, root, path, text)) is not None:
            return failed
    return EditOutcome(applied=True, written_to_disk=True)


class LspHost:
    def __init__(self, server: LanguageServer, caps: ClientCaps, progress: ProgressManager) -> None:
        self.server = server
        self._caps = caps
        self.progress = progress
        self._review_uris: set[str] = set()  # where the last /review published findings
        self.attention = Attention(server, notify=caps.notify, show_document=caps.show_document)
        declared = caps.diagnostics or caps.language_query
        self._eyes = LspEyes(server, diagnostics=caps.diagnostics, language=caps.language_query) if declared else None

    @property
    def caps(self) -> ClientCaps:
        return self._caps

    def eyes(self) -> LspEyes | None:
        return self._eyes

    def emit(self, event: Event) -> None:
        payload = msgspec.to_builtins(event)
        if event.agent_id is None:  # not a subagent's: the keys are left out, not null
            payload.pop("agentId", None)
            payload.pop("parentCallId", None)
        protocol = self.server.protocol
        assert isinstance(protocol, CoderProtocol)
        protocol.notify_json("coder/event", payload)
        self.attention.on_event(event)

    def show_message(self, kind: MessageKind, message: str) -> None:
        self.server.window_show_message(types.ShowMessageParams(type=_KINDS[kind], message=carried(message)))

    async def ask(self, kind: MessageKind, message: str, choices: list[str]) -> str | None:
        # Text UTF-8 cannot carry (a name that is not UTF-8) goes as the one rule shows it; the
        # answer is the title sent, mapped back to the choice given.
        titles = {carried(c): c for c in choices}
        self.attention.waiting("approval", message)
        params = types.ShowMessageRequestParams(
            type=_KINDS[kind], message=carried(message), actions=[types.MessageActionItem(title=t) for t in titles]
        )
        try:
            # Shielded: a question given up on (timeout, cancel) leaves pygls's request
            # pending, so a late answer resolves it quietly instead of hitting a cancelled future.
            answer = await asyncio.shield(self.server.window_show_message_request_async(params))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # e.g. Helix has no window/showMessageRequest: a dismissed question
            log.warning("the client could not ask the user (%s); taken as dismissed", exc)
            return None
        return titles.get(answer.title, answer.title) if answer is not None else None

    async def ask_user(self, submission_id: str, questions: list[AskQuestion]) -> list[AskAnswer] | None:
        """`coder/askUser` to a client that said it has a UI for it (else None: the tool then
        asks with `window/showMessageRequest`). Shielded like `ask`; a malformed answer, an
        error or a count that does not match the questions is no answer."""
        if not self._caps.ask_user:
            return None
        params = msgspec.to_builtins(AskUserParams(submission_id=submission_id, questions=questions))
        self.attention.waiting("question", questions[0].question if questions else "", submission_id)
        try:
            raw = await asyncio.shield(self.server.protocol.send_request_async("coder/askUser", params))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("coder/askUser failed (%s); taken as not answered", exc)
            return None
        try:
            result = msgspec.convert(plain(raw), AskUserResult)
        except (msgspec.ValidationError, TypeError) as exc:
            log.warning("coder/askUser answered %r (%s); taken as not answered", raw, exc)
            return None
        if result.answers is None or len(result.answers) != len(questions):
            return None
        return result.answers

    def open_document(self, path: Path) -> OpenDocument | None:
        if stray_surrogate(str(path)) is not None:
            return None  # a name that is not UTF-8 has no URI the editor could hold it under
        uri = from_fs_path(str(path))
        if uri is None:
            return None
        doc = self.server.workspace.text_documents.get(uri)
        if doc is None:
            return None
        return OpenDocument(text=doc.source, version=doc.version)

    def open_paths(self) -> Sequence[Path]:
        """Every open `file://` document's path; a `git:`, `untitled:` or remote URI names no
        file of this machine and is left out (as `open_document` never finds it)."""
        out: list[Path] = []
        for uri in list(self.server.workspace.text_documents):
            if uri_scheme(uri) == "file" and (fs_path := to_fs_path(uri)) is not None:
                out.append(Path(fs_path))
        return out

    async def fetch_documents(self, paths: Sequence[Path]) -> None:
        return None  # the client keeps `workspace.text_documents` current (didOpen/didChange)

    def _is_open(self, path: str) -> bool:
        return self.open_document(Path(path)) is not None

    async def apply_edit(self, request: EditRequest) -> EditOutcome:
        """The edit through the editor when it can apply edits, else on disk. Every disk write
        is the server's one write bounded by `request.root` (`engine/edgewrite.py`); the
        editor's part is checked right before it is sent and again after the answer: a
        folder on the way that is (now) a link leading out fails the edit."""
        root = Path(request.root)
        if (refused := await asyncio.to_thread(refusal, root, [ch.path for ch in request.changes])) is not None:
            return refused
        if not self._caps.apply_edit:
            return await _write_all(root, [(ch.path, ch.new_text) for ch in request.changes])
        to_client: list[FileChange] = []
        to_disk: list[tuple[str, str]] = []
        for ch in request.changes:
            # a name that is not UTF-8 cannot be named to the editor (protocol/wiretext.py)
            if (ch.kind == "create" and needs_disk_create(self._caps)) or stray_surrogate(ch.path) is not None:
                to_disk.append((ch.path, ch.new_text))
            else:
                to_client.append(ch)
        if (failed := await _write_all(root, to_disk)).failed or not to_client:
            return failed
        was_open = {ch.path: self._is_open(ch.path) for ch in to_client}
        review = request.needs_confirmation and self._caps.change_annotations
        before = {ch.path: _disk_text(Path(ch.path)) for ch in to_client if review and not was_open[ch.path]}
        edit = workspace_edit(tuple(to_client), self._caps, review_label=request.label if review else None)
        params = types.ApplyWorkspaceEditParams(edit=edit, label=request.label)
        if (refused := await asyncio.to_thread(refusal, root, [ch.path for ch in to_client])) is not None:
            return refused  # the last moment before the editor gets it
        if review:
            self.attention.waiting("review", request.label)
        result = await self._apply_edit_request(params, request.timeout_seconds)
        if result is None:
            return EditOutcome(applied=False, reason="not answered in time", timed_out=True)
        if not result.applied:
            return EditOutcome(applied=False, reason=result.failure_reason or "the editor did not apply it")
        paths = [ch.path for ch in to_client]
        if (refused := await asyncio.to_thread(refusal, root, paths, answered=True)) is not None:
            return refused  # the editor wrote, or holds, an edit whose folder now leads out: never ours to follow
        if review:
            # The user may have applied only part: never write our intended text over theirs.
            # A file the client loaded to apply the edit: its buffer goes to disk (one writer).
            kept: list[tuple[str, str]] = []
            for ch in to_client:
                if was_open[ch.path]:
                    continue
                text = await self._loaded_copy(Path(ch.path), before[ch.path])
                if text is not None:
                    kept.append((ch.path, text))
            if (failed := await _write_all(root, kept)).failed:
                return failed
            return EditOutcome(applied=True, written_to_disk=not any(was_open.values()))
        # Files the user did not have open: the server is their one writer (so the shell and
        # tests see the change); `EditApplied.on_disk` tells the client not to save its copy.
        unopened = [(ch.path, ch.new_text) for ch in to_client if not was_open[ch.path]]
        if (failed := await _write_all(root, unopened)).failed:
            return failed
        return EditOutcome(applied=True, written_to_disk=not any(was_open.values()))

    async def _apply_edit_request(
        self, params: types.ApplyWorkspaceEditParams, timeout: float | None
    ) -> types.ApplyWorkspaceEditResult | None:
        """`workspace/applyEdit`, withdrawn with `$/cancelRequest` when the caller gives up
        (an interrupt) or after `timeout` (a review left open): the editor closes its
        question, so a late answer cannot land an edit nobody waits for. After a timeout the
        client's answer to the withdrawal is still read for `WITHDRAW_GRACE_SECONDS`: an
        edit it applied at the last moment is taken as answered. None: not answered.
        Shielded like `ask`: the request stays pending in pygls until the client answers."""
        msg_id = f"coder-apply-{uuid.uuid4().hex}"
        sent = self.server.protocol.send_request(types.WORKSPACE_APPLY_EDIT, params, msg_id=msg_id)
        pending = asyncio.wrap_future(sent)
        pending.add_done_callback(lambda f: f.cancelled() or f.exception())  # a late error is nobody's

        def withdraw() -> None:
            self.server.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))

        try:
            result: types.ApplyWorkspaceEditResult = await asyncio.wait_for(asyncio.shield(pending), timeout)
            return result
        except asyncio.CancelledError:
            withdraw()
            raise
        except TimeoutError:
            withdraw()
        try:
            last: types.ApplyWorkspaceEditResult = await asyncio.wait_for(
                asyncio.shield(pending), WITHDRAW_GRACE_SECONDS
            )
        except Exception:  # no answer, or the client's RequestCancelled error
            return None
        return last if last.applied else None

    async def _loaded_copy(self, path: Path, before: str | None) -> str | None:
        """What the user kept of a reviewed edit of a file they did not have open: the copy
        the client loaded to apply it (VS Code sends its didOpen/didChange after answering
        the applyEdit). None when the disk already changed (the client saved it) or no
        changed copy arrived within the grace period (nothing was applied)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + LOADED_COPY_GRACE_SECONDS
        while True:
            if _disk_text(path) != before:
                return None
            doc = self.open_document(path)
            if doc is not None and doc.text != before:
                return doc.text
            if loop.time() >= deadline:
                return None
            await asyncio.sleep(0.05)

    async def show_document(self, path: Path) -> bool:
        if not self._caps.show_document:
            return False
        params = types.ShowDocumentParams(uri=path.as_uri(), take_focus=True)
        try:
            answer = await self.server.window_show_document_async(params)
        except Exception as exc:  # the client's failure is a "no", never the submission's
            log.info("window/showDocument failed: %s", exc)
            return False
        return bool(answer and answer.success)

    def publish_findings(self, findings: Sequence[Finding]) -> None:
        by_uri: dict[str, list[types.Diagnostic]] = {}
        for f in findings:
            start = max(f.line - 1, 0)
            end = max((f.end_line or f.line) - 1, start)
            uri = from_fs_path(f.path) if stray_surrogate(f.path) is None else None
            by_uri.setdefault(uri or Path(f.path).as_uri(), []).append(
                types.Diagnostic(
                    range=types.Range(
                        start=types.Position(line=start, character=0), end=types.Position(line=end + 1, character=0)
                    ),
                    message=f.message,
                    severity=_SEVERITY[f.severity],
                    source="coder",
                )
            )
        for uri in self._review_uris - by_uri.keys():  # the previous review's, now without findings
            by_uri[uri] = []
        for uri, diagnostics in by_uri.items():
            self.server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics)
            )
        self._review_uris = {uri for uri, d in by_uri.items() if d}

    async def begin_progress(self, submission_id: str, title: str, message: str) -> None:
        await self.progress.begin(submission_id, carried(title), carried(message))

    def report_progress(self, submission_id: str, message: str, percentage: int | None = None) -> None:
        self.progress.report(submission_id, carried(message), percentage)

    def end_progress(self, submission_id: str, message: str) -> None:
        self.progress.end(submission_id, carried(message))
