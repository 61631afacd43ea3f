"""pygls protocol with our own executeCommand and `$/cancelRequest` handling.

pygls's built-in executeCommand converts arguments with cattrs and, on `$/cancelRequest`,
cancels only its outer future. We take both over: arguments are decoded with msgspec by
the command layer, and a cancel request interrupts the submission (which then answers).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method


class CoderProtocol(LanguageServerProtocol):
    on_cancel_request: Callable[[Any], bool] | None = None
    on_execute_command: Callable[[types.ExecuteCommandParams, Any], Any] | None = None

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        if self.on_cancel_request is not None and self.on_cancel_request(msg_id):
            return
        super()._handle_cancel_notification(msg_id)

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, types.InitializeResult]:
        # Our text edits are computed in UTF-16 code units: negotiate UTF-16 (every client supports it).
        if params.capabilities.general is not None:
            params.capabilities.general.position_encodings = None
        return (yield from super().lsp_initialize(params))

    # pygls types its own handler as a generator; it awaits a coroutine handler just the same.
    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    async def lsp_workspace__execute_command(  # type: ignore[override]
        self, params: types.ExecuteCommandParams
    ) -> Any:
        assert self.on_execute_command is not None
        return await self.on_execute_command(params, self.msg_id)
