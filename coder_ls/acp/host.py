"""AcpHost: the engine's Host over an ACP connection (what `lsp/host.py` is over LSP).

Which ACP session an engine call belongs to: the engine's session id on the event (routed
through `Routes`, which follows `/new` and `/clear`), else the session whose prompt is
running (`PROMPT_SESSION`, a context variable set by `session/prompt`; the engine runs a
submission's tasks as child tasks, which inherit it). Notifications leave in the order
the engine emitted them; a request (`session/request_permission`, `fs/write_text_file`)
first waits for the notifications before it, and `session/prompt` answers only after
every update of its turn went out.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from acp import helpers
from acp.interfaces import Client
from acp.schema import AllowedOutcome, PermissionOption, PermissionOptionKind, ToolCallUpdate

from coder_ls.acp.updates import Diff, SessionView, Update, commands_update, tool_kind, translate
from coder_ls.engine.edgewrite import refusal, write_inside
from coder_ls.engine.eyes import EditorEyes
from coder_ls.engine.host import ClientCaps, MessageKind, OpenDocument
from coder_ls.protocol.ask import AskAnswer, AskQuestion
from coder_ls.protocol.edits import EditOutcome, EditRequest, Finding
from coder_ls.protocol.events import ApprovalRequested, CommandsChanged, Event, SessionChanged
from coder_ls.protocol.results import CommandInfo
from coder_ls.protocol.wiretext import carried, stray_surrogate
from coder_ls.saferead import read_text_or_none

log = logging.getLogger(__name__)

PROMPT_SESSION: contextvars.ContextVar[str | None] = contextvars.ContextVar("coder_acp_session", default=None)

# The approval question's choices (agent/policy.py, tools/bash.py, engine/tasks.py) as ACP
# option kinds: the last choice of every question is its refusal.
ALWAYS = {"Allow for session": "allow_always", "Always allow": "allow_always"}


def option_kind(choice: str, last: bool) -> PermissionOptionKind:
    if last:
        return "reject_once"
    return "allow_always" if choice in ALWAYS else "allow_once"


def permission_options(choices: list[str], refusable: bool = True) -> list[PermissionOption]:
    """The choices as options; a question that is no permission (`ask_user`'s, whose last
    choice is "Other…") has no refusal among them: every option is `allow_once`."""
    return [
        PermissionOption(option_id=f"{i}", name=c, kind=option_kind(c, refusable and i == len(choices) - 1))
        for i, c in enumerate(choices)
    ]


DIFF_MAX_BYTES = 2 * 1024 * 1024  # a bigger file's edit is shown without its diff


def read_for_diff(path: str) -> str | None:
    """A file's text for an edit's diff (regular files only, capped, never blocking on a FIFO)."""
    return read_text_or_none(Path(path), DIFF_MAX_BYTES)


class Routes:
    """ACP session id <-> the engine session it currently stands for (the same id at
    `session/new`; `/new` and `/clear` move an ACP session to a fresh engine session)."""

    def __init__(self) -> None:
        self.engine_of: dict[str, str] = {}
        self.acp_of: dict[str, str] = {}
        self.views: dict[str, SessionView] = {}

    def add(self, acp_id: str, engine_id: str, root: Path) -> None:
        self.engine_of[acp_id] = engine_id
        self.acp_of[engine_id] = acp_id
        self.views.setdefault(acp_id, SessionView(root=str(root), read=read_for_diff))

    def moved(self, previous: str | None, new: str) -> None:
        acp_id = self.acp_of.get(previous or "") or PROMPT_SESSION.get()
        if acp_id is not None:
            self.engine_of[acp_id] = new
            self.acp_of[new] = acp_id


class AcpHost:
    def __init__(
        self,
        conn: Client,
        caps: ClientCaps,
        routes: Routes,
        interrupt: Callable[[str], None],
        catalog: Callable[[str], list[CommandInfo]] = lambda acp_id: [],
    ) -> None:
        self.conn = conn
        self._catalog = catalog  # an ACP session's command catalog (its engine's)
        self._caps = caps
        self.routes = routes
        self._interrupt = interrupt  # the ACP session's turn is cancelled (a permission answered `cancelled`)
        self.read_text = False  # the client offers fs/read_text_file
        self._buffers: dict[Path, OpenDocument] = {}  # unsaved editor text, per fetched path
        self._sending: set[asyncio.Task[None]] = set()

    @property
    def caps(self) -> ClientCaps:
        return self._caps

    # -- notifications, in order ---------------------------------------------------------
    def send(self, acp_id: str, update: Update) -> None:
        """Queue one `session/update`, in the order of the calls: tasks take their first step
        in the order they were created, and in it the SDK puts the message in its (unbounded)
        send queue, before the first await that suspends (tested: tests/acp/test_acp_host.py).
        No task waits for the one before it: a step of the agent is not slowed by its updates."""

        async def go() -> None:
            try:
                await self.conn.session_update(acp_id, update)
            except Exception as exc:  # the client went away: the read loop ends at EOF
                log.debug("session/update not sent: %s", exc)

        task = asyncio.get_running_loop().create_task(go())
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def flush(self) -> None:
        """Until every update sent so far has been written."""
        if self._sending:
            await asyncio.wait(list(self._sending))

    def _acp_session(self, event: Event | None = None) -> str | None:
        if event is not None and event.session_id in self.routes.acp_of:
            return self.routes.acp_of[event.session_id]
        return PROMPT_SESSION.get()

    def emit(self, event: Event) -> None:
        if isinstance(event, CommandsChanged):  # a command file changed: every session's list
            for each in list(self.routes.views):
                self.send(each, commands_update(self._catalog(each)))
            return
        if isinstance(event, SessionChanged):
            self.routes.moved(event.previous_session_id, event.session_id)
        acp_id = self._acp_session(event)
        if acp_id is None:
            return
        view = self.routes.views.get(acp_id)
        if view is None:
            return
        if isinstance(event, ApprovalRequested):
            view.approval = (event.call_id, event.tool, event.summary)
        for update in translate(event, view):
            self.send(acp_id, update)

    def show_message(self, kind: MessageKind, message: str) -> None:
        acp_id = self._acp_session()
        if acp_id is None:
            log.log(logging.WARNING if kind in ("error", "warning") else logging.INFO, "%s", message)
            return
        self.send(acp_id, helpers.update_agent_message_text(f"\n[{kind}] {carried(message)}\n"))

    # -- questions -------------------------------------------------------------------------
    async def ask(self, kind: MessageKind, message: str, choices: list[str]) -> str | None:
        """`session/request_permission` about the tool call the engine announced just before
        (approvals emit `approvalRequested` and ask in the same step), else a call of its own.
        `cancelled` is not a refusal: it is the user cancelling the turn, which is interrupted.
        An approval, or a warning's confirmation, has its refusal as last choice; an `info`
        question of its own (the `ask_user` tool's, one question at a time) has none."""
        acp_id = self._acp_session()
        if acp_id is None or not choices:
            return None
        view = self.routes.views[acp_id]
        pending, view.approval = view.approval, None
        if pending is not None:
            call_id, tool, summary = pending
            call = ToolCallUpdate(
                tool_call_id=call_id, title=f"{tool}: {summary}", kind=tool_kind(tool), status="pending"
            )
        else:
            call = ToolCallUpdate(
                tool_call_id=f"ask-{uuid.uuid4().hex[:12]}", title=message.splitlines()[0], kind="other"
            )
        call.content = [helpers.tool_content(helpers.text_block(message))]
        options = permission_options(choices, refusable=pending is not None or kind != "info")
        answered, choice = await self._request(acp_id, call, options, choices)
        if answered:
            return choice
        self._interrupt(acp_id)  # `cancelled`: the turn is being cancelled; wait to be
        await asyncio.Event().wait()
        return None

    async def choose(self, acp_id: str, message: str, choices: list[str]) -> str | None:
        """A question of the edge's own between turns (a proposed plan's, `acp/plan.py`): the
        choice, None when the client cancels it or cannot ask (no turn to interrupt). The
        last choice is the refusal."""
        call = ToolCallUpdate(
            tool_call_id=f"ask-{uuid.uuid4().hex[:12]}", title=message.splitlines()[0], kind="switch_mode"
        )
        call.content = [helpers.tool_content(helpers.text_block(message))]
        return (await self._request(acp_id, call, permission_options(choices), choices))[1]

    async def _request(
        self, acp_id: str, call: ToolCallUpdate, options: list[PermissionOption], choices: list[str]
    ) -> tuple[bool, str | None]:
        """`session/request_permission`: (True, the choice) when one was selected, (False,
        None) when the client cancelled; a client that cannot ask is a dismissal (True, None)."""
        await self.flush()
        try:
            # Shielded: a question given up on (timeout, interrupt) leaves the request pending,
            # so a late answer is taken quietly instead of hitting a cancelled future.
            response = await asyncio.shield(
                self.conn.request_permission(session_id=acp_id, tool_call=call, options=options)
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("the client could not ask the user (%s); taken as dismissed", exc)
            return True, None
        outcome = response.outcome
        if isinstance(outcome, AllowedOutcome):
            index = int(outcome.option_id) if outcome.option_id.isdigit() else -1
            return True, (choices[index] if 0 <= index < len(choices) else None)
        return False, None

    async def ask_user(self, submission_id: str, questions: list[AskQuestion]) -> list[AskAnswer] | None:
        """ACP has no multiple-choice question of its own: `caps.ask_user` stays False, so the
        `ask_user` tool asks one question at a time through `ask` (session/request_permission
        with the options as its choices)."""
        return None

    async def show_document(self, path: Path) -> bool:
        """ACP cannot open a document in the editor: the caller names the path instead."""
        return False

    # -- edits and buffers -----------------------------------------------------------------
    async def apply_edit(self, request: EditRequest) -> EditOutcome:
        """`fs/write_text_file` for each file (the client's buffer gets it, unsaved changes
        included); the disk is checked afterwards and written when the client left it behind,
        so the checkpoint and the shell see the edit (one writer: the same text). The path is
        checked right before it is handed to the editor and again after its answer: a folder
        on the way that is (now) a link leading out of `request.root` fails the edit, and the
        server's own write is bounded by it (`engine/edgewrite.py`)."""
        acp_id = self._acp_session()
        view = self.routes.views.get(acp_id) if acp_id else None
        call = view.last_edit_call() if view else None
        root = Path(request.root)
        on_disk = True
        for ch in request.changes:
            path = Path(ch.path)
            if (refused := await asyncio.to_thread(refusal, root, [ch.path])) is not None:
                return refused
            buffer = self._buffers.get(path)
            old = buffer.text if buffer else await asyncio.to_thread(read_text_or_none, path, DIFF_MAX_BYTES)
            # a name that is not UTF-8 cannot be named to the editor: the server writes it
            if self._caps.apply_edit and acp_id is not None and stray_surrogate(ch.path) is None:
                await self.flush()
                if (refused := await asyncio.to_thread(refusal, root, [ch.path])) is not None:
                    return refused  # the last moment before the editor gets it
                try:
                    await self.conn.write_text_file(session_id=acp_id, path=ch.path, content=ch.new_text)
                except Exception as exc:
                    return EditOutcome(applied=False, reason=f"the editor did not write {path.name}: {exc}")
                if (refused := await asyncio.to_thread(refusal, root, [ch.path], answered=True)) is not None:
                    return refused  # never read nor written through a folder that now leads out
                if await asyncio.to_thread(read_text_or_none, path, 64 * 1024 * 1024) != ch.new_text:
                    if (failed := await asyncio.to_thread(write_inside, root, ch.path, ch.new_text)) is not None:
                        return failed
                else:
                    on_disk = False
            elif (failed := await asyncio.to_thread(write_inside, root, ch.path, ch.new_text)) is not None:
                return failed
            if path in self._buffers:
                self._buffers[path] = OpenDocument(text=ch.new_text, version=None)
            if call is not None:
                call.diffs.append(Diff(carried(ch.path), old, ch.new_text))
        return EditOutcome(applied=True, written_to_disk=on_disk)

    def open_document(self, path: Path) -> OpenDocument | None:
        """The editor's text of `path` as fetched for the running tool call, when it differs
        from the disk (an unsaved buffer); else None and the tools read the disk."""
        return self._buffers.get(path)

    def open_paths(self) -> Sequence[Path]:
        """The paths fetched for the running tool call whose text differs from the disk."""
        return list(self._buffers)

    async def fetch_documents(self, paths: Sequence[Path]) -> None:
        """`fs/read_text_file` for each path the tool call names, when the client offers it:
        what the editor has (unsaved changes included) is what the tool reads and edits."""
        acp_id = self._acp_session()
        if not self.read_text or acp_id is None:
            return
        for path in paths:
            self._buffers.pop(path, None)
            if stray_surrogate(str(path)) is not None:
                continue  # a name that is not UTF-8: the editor cannot be asked for it
            disk = await asyncio.to_thread(read_text_or_none, path, DIFF_MAX_BYTES)
            if disk is None:  # no regular file there: nothing the editor could hold unsaved
                continue
            await self.flush()
            try:
                response = await self.conn.read_text_file(session_id=acp_id, path=str(path))
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # e.g. the editor cannot open it: the disk is the truth
                log.debug("fs/read_text_file %s: %s", path, exc)
                continue
            if response.content != disk:
                self._buffers[path] = OpenDocument(text=response.content, version=None)

    def eyes(self) -> EditorEyes | None:
        return None  # no editor's language servers to ask (contract section 23)

    def publish_findings(self, findings: Sequence[Finding]) -> None:
        acp_id = self._acp_session()
        if acp_id is None or not findings:
            return
        lines = [f"{f.path}:{f.line}: {f.severity}: {f.message}" for f in findings]
        self.send(acp_id, helpers.update_agent_message_text("\nFindings:\n" + "\n".join(lines) + "\n"))

    # ACP has no work-done progress: tool calls and the prompt's answer say it.
    async def begin_progress(self, submission_id: str, title: str, message: str) -> None:
        return None

    def report_progress(self, submission_id: str, message: str, percentage: int | None = None) -> None:
        return None

    def end_progress(self, submission_id: str, message: str) -> None:
        return None


def caps_from(client_caps: Any) -> ClientCaps:
    """What the client offers, as the engine's booleans: `fs.writeTextFile` is ACP's applyEdit."""
    fs = getattr(client_caps, "fs", None)
    return ClientCaps(
        apply_edit=bool(fs and fs.write_text_file),
        show_message_request=True,  # session/request_permission is part of every ACP client
    )
