"""Work-done progress: the request's token when it has one, else one we create.

pygls never forgets tokens; we keep our own maps and pop them at `end`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from coder_ls.lsp.protocol import CoderProtocol

log = logging.getLogger(__name__)
CREATE_TIMEOUT = 5.0  # seconds a client may take to accept a progress token


class ProgressManager:
    def __init__(self, server: LanguageServer) -> None:
        self.server = server
        self.can_create = False
        self._request_tokens: dict[str, Any] = {}  # submission -> the request's workDoneToken
        self._active: dict[str, Any] = {}  # submission -> token in use
        self._by_token: dict[Any, str] = {}  # token -> submission

    def attach_request_token(self, submission_id: str, token: Any) -> None:
        """The request's own token: a cancel on it reaches the submission even while it is
        queued, before its progress has begun."""
        self._request_tokens[submission_id] = token
        self._by_token[token] = submission_id

    def _drop_request_token(self, submission_id: str) -> None:
        token = self._request_tokens.pop(submission_id, None)
        if token is not None and self._by_token.get(token) == submission_id:
            del self._by_token[token]

    def submission_for(self, token: Any) -> str | None:
        return self._by_token.get(token)

    async def begin(self, submission_id: str, title: str, message: str) -> None:
        token = self._request_tokens.pop(submission_id, None)
        if token is None:
            if not self.can_create:
                return
            token = f"coder/{submission_id}"
            try:
                await asyncio.wait_for(self.server.work_done_progress.create_async(token), CREATE_TIMEOUT)
            except Exception as exc:  # refused or never answered: run without progress
                log.info("work done progress create refused: %s", exc)
                self.server.work_done_progress.tokens.pop(token, None)
                return
        self._active[submission_id] = token
        self._by_token[token] = submission_id
        self.server.work_done_progress.begin(
            token, types.WorkDoneProgressBegin(title=title, message=message, cancellable=True)
        )

    def report(self, submission_id: str, message: str, percentage: int | None = None) -> None:
        token = self._active.get(submission_id)
        if token is not None:  # `$/progress` as pygls would send it, encoded by msgspec
            value: dict[str, object] = {"kind": "report", "message": message}
            if percentage is not None:
                value["percentage"] = percentage
            protocol = self.server.protocol
            assert isinstance(protocol, CoderProtocol)
            protocol.notify_json(types.PROGRESS, {"token": token, "value": value})

    def end(self, submission_id: str, message: str) -> None:
        self._drop_request_token(submission_id)
        token = self._active.pop(submission_id, None)
        if token is None:
            return
        self._by_token.pop(token, None)
        self.server.work_done_progress.tokens.pop(token, None)
        self.server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))

    def forget(self, submission_id: str) -> None:
        """The submission is over: drop anything left (a token it never used)."""
        self._drop_request_token(submission_id)
        token = self._active.pop(submission_id, None)
        if token is not None:
            self._by_token.pop(token, None)
            self.server.work_done_progress.tokens.pop(token, None)
