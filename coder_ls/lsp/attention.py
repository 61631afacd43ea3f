"""Getting the user's attention, and letting them follow the agent (contract section 22).

- **Focus.** The client says whether its window has the focus (`coder.focus {focused}`;
  the VS Code extension from `window.onDidChangeWindowState`, the Neovim plugin on
  FocusGained/FocusLost). A client that never says so is taken as focused: nothing is
  announced to it.
- **Notifications.** While the window is not focused, a turn that ends (a prompt or a
  `!command`: a submission that started with a `userMessage`) and every wait for the user
  (an approval or other question, the model's `ask_user`, an edit left to the user's
  review) is announced once: `coder/notify {kind, message, ...}` to a client that declares
  `experimental.coderNotify` (or `initializationOptions.capabilities.notify`), else
  `window/showMessage`.
- **Following.** With `agent.follow` on, each file the agent edits is opened with
  `window/showDocument {takeFocus: false}` (once per submission and file), so the editor
  shows it without taking the cursor from the user.

All of it watches what already crosses the edge (the events the engine emits, the
questions and reviewed edits `LspHost` sends): the engine knows nothing of it, and the ACP
edge is untouched.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Literal

import msgspec
from lsprotocol import types
from pygls.lsp.server import LanguageServer

from coder_ls.lsp.protocol import CoderProtocol
from coder_ls.protocol.ask import NotifyParams
from coder_ls.protocol.events import AssistantMessage, EditApplied, Event, TurnFinished, UserMessage
from coder_ls.protocol.wiretext import carried

log = logging.getLogger(__name__)

WaitKind = Literal["approval", "question", "review"]
_WAITING = {
    "approval": "Coder is waiting for your answer",
    "question": "Coder has a question for you",
    "review": "Coder is waiting for you to review an edit",
}
SUMMARY_CHARS = 160


def _first_line(text: str) -> str:
    line = next((x.strip() for x in text.splitlines() if x.strip()), "")
    return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1] + "…"


def _no_follow() -> bool:
    return False


class Attention:
    """One client's focus, and what is announced or opened because of it."""

    def __init__(self, server: LanguageServer, *, notify: bool, show_document: bool) -> None:
        self.server = server
        self.notify_capable = notify  # the client shows `coder/notify` itself
        self.show_document_capable = show_document
        self.focused = True  # until the client says otherwise
        self.follow: Callable[[], bool] = _no_follow  # `agent.follow`, set once the engine exists
        self._turns: dict[str, str] = {}  # submission id -> the last thing the agent said ("" so far)
        self._opened: dict[str, set[str]] = {}  # submission id -> the files followed in it
        self._pending: set[asyncio.Task[None]] = set()

    def set_focus(self, focused: bool) -> None:
        self.focused = focused

    # -- the events ---------------------------------------------------------------------------
    def on_event(self, event: Event) -> None:
        sid = event.submission_id
        if event.agent_id is not None:  # a subagent's: its edits are followed, its end is not the turn's
            if isinstance(event, EditApplied):
                self._follow(sid, event)
            return
        match event:
            case UserMessage():
                self._turns.setdefault(sid, "")
            case AssistantMessage(text=text) if sid in self._turns and text.strip():
                self._turns[sid] = text
            case EditApplied():
                self._follow(sid, event)
            case TurnFinished(status=status):
                self._opened.pop(sid, None)
                said = self._turns.pop(sid, None)
                if said is None or self.focused:
                    return
                if status == "completed":
                    message = "Coder finished" + (f": {_first_line(said)}" if said.strip() else ".")
                else:
                    message = f"Coder: the turn {'was cancelled' if status == 'cancelled' else 'failed'}."
                self._announce(NotifyParams(kind="turnFinished", message=message, session_id=event.session_id,
                                            submission_id=sid, status=status))  # fmt: skip

    def waiting(self, kind: WaitKind, detail: str, submission_id: str | None = None) -> None:
        """The server is about to wait for the user (a question, `ask_user`, a review)."""
        if self.focused:
            return
        line = _first_line(detail)
        message = f"{_WAITING[kind]}: {line}" if line else f"{_WAITING[kind]}."
        self._announce(NotifyParams(kind=kind, message=message, submission_id=submission_id))

    # -- what goes to the client --------------------------------------------------------------
    def _announce(self, params: NotifyParams) -> None:
        params = msgspec.structs.replace(params, message=carried(params.message))
        if self.notify_capable:
            protocol = self.server.protocol
            assert isinstance(protocol, CoderProtocol)
            protocol.notify_json("coder/notify", msgspec.to_builtins(params))
            return
        self.server.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=params.message))

    def _follow(self, sid: str, event: EditApplied) -> None:
        if not event.applied or not self.show_document_capable or not self.follow():
            return
        opened = self._opened.setdefault(sid, set())
        if event.uri in opened:
            return
        opened.add(event.uri)
        task = asyncio.ensure_future(self._show(event.uri))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _show(self, uri: str) -> None:
        params = types.ShowDocumentParams(uri=uri, take_focus=False)
        try:
            await self.server.window_show_document_async(params)
        except Exception as exc:  # the client's failure is not the turn's
            log.info("window/showDocument (agent.follow) failed: %s", exc)
