"""pygls protocol with our own executeCommand and `$/cancelRequest` handling.

pygls's built-in executeCommand converts arguments with cattrs and, on `$/cancelRequest`,
cancels only its outer future. We take both over: arguments are decoded with msgspec by
the command layer, and a cancel request interrupts the submission (which then answers).

pygls also logs every error answer with a traceback at ERROR and reports it as a server
error. An error that is the client's fault (invalid params, an unknown method, a request
before `initialize`, a cancelled request) is answered and logged in one line at WARNING;
only a real failure of ours keeps the traceback.

A result that is already JSON (`msgspec.Raw`, what `coder.*` commands answer) is sent as
those bytes: pygls would convert it with cattrs and `json.dumps` again, which cost a
1,000-entry `coder.listCommands` most of its time (benchmarks/README.md, `corpus_list`).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Generator
from concurrent.futures import Future
from typing import Any

import msgspec
from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcMethodNotFound,
    JsonRpcRequestCancelled,
    JsonRpcServerNotInitialized,
)
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from coder_ls import PROTOCOL_VERSION
from coder_ls.lsp.writer import BatchedWriter
from coder_ls.protocol.wiretext import carried_value

log = logging.getLogger(__name__)

#: Errors the client caused: an answer and one line in the log, no traceback.
CLIENT_ERRORS = (
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcMethodNotFound,
    JsonRpcRequestCancelled,
    JsonRpcServerNotInitialized,
)


class CoderProtocol(LanguageServerProtocol):
    on_cancel_request: Callable[[Any], bool] | None = None
    on_execute_command: Callable[[types.ExecuteCommandParams, Any], Any] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._writes: set[asyncio.Future[Any]] = set()  # writes under way (kept referenced)

    def _send_handler_result(self, future: Future[Any], *, msg_id: Any) -> None:
        error = None if future.cancelled() else future.exception()
        if not isinstance(error, CLIENT_ERRORS):
            super()._send_handler_result(future, msg_id=msg_id)  # a result, or our own bug
            return
        assert isinstance(error, JsonRpcException)
        self._request_futures.pop(msg_id, None)
        if not isinstance(error, JsonRpcRequestCancelled):
            log.warning("request %s answered with error %d: %s", msg_id, error.code, error.message)
        self._send_response(msg_id, error=error.to_response_error())

    def _send_response(self, msg_id: Any, result: Any | None = None, error: Any | None = None) -> None:
        if error is not None or not isinstance(result, msgspec.Raw):
            super()._send_response(msg_id, result=result, error=error)
            return
        self._result_types.pop(msg_id, None)
        # one copy of a result that can be hundreds of KB (the catalog), not two
        body = b"".join((b'{"jsonrpc":"2.0","id":', msgspec.json.encode(msg_id), b',"result":', result, b"}"))
        self._send_bytes(body, urgent=True)

    def notify_json(self, method: str, params: Any) -> None:
        """`notify`, with `params` (builtins or msgspec structs) encoded by msgspec and sent as
        they are: no cattrs walk, no `json.dumps` (an event or a progress report per step of a
        turn). A text UTF-8 cannot carry (an unpaired surrogate) is sent as the one rule says
        (`protocol/wiretext.py`: a byte that is not UTF-8 as `\\xNN`)."""
        try:
            encoded = msgspec.json.encode(params)
        except UnicodeEncodeError:
            encoded = msgspec.json.encode(carried_value(msgspec.to_builtins(params)))
        self._send_bytes(b'{"jsonrpc":"2.0","method":%s,"params":%s}' % (msgspec.json.encode(method), encoded))

    def _send_data(self, data: Any) -> None:
        """pygls's own sending; a response or a request of ours (it has an id: the client
        waits on it) leaves at once, with what is pending, instead of waiting for company."""
        super()._send_data(data)
        msg_id = data.get("id") if isinstance(data, dict) else getattr(data, "id", None)
        if msg_id is not None:
            self._urgent()

    def _urgent(self) -> None:
        if isinstance(self.writer, BatchedWriter):
            self.writer.flush()

    def _send_bytes(self, body: bytes, *, urgent: bool = False) -> None:
        """`_send_data` for a body already encoded (UTF-8 JSON): the same framing."""
        if self.writer is None:
            log.error("Unable to send data, no available transport!")
            return
        if self._include_headers:
            header = f"Content-Length: {len(body)}\r\nContent-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
            body = header.encode("ascii") + body
        try:
            res = self.writer.write(body)
            if urgent:
                self._urgent()
            if inspect.isawaitable(res):
                task = asyncio.ensure_future(res)
                self._writes.add(task)
                task.add_done_callback(self._writes.discard)
        except BrokenPipeError:
            log.exception("Error sending data. BrokenPipeError")
            raise

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        if self.on_cancel_request is not None and self.on_cancel_request(msg_id):
            return
        super()._handle_cancel_notification(msg_id)

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, types.InitializeResult]:
        # Our text edits are computed in UTF-16 code units: negotiate UTF-16 (every client supports it).
        if params.capabilities.general is not None:
            params.capabilities.general.position_encodings = None
        result = yield from super().lsp_initialize(params)
        # The contract's version, for clients to compare with theirs (contract section 24).
        experimental = result.capabilities.experimental
        experimental = dict(experimental) if isinstance(experimental, dict) else {}
        experimental["coder"] = {"protocolVersion": PROTOCOL_VERSION}
        result.capabilities.experimental = experimental
        return result

    # pygls types its own handler as a generator; it awaits a coroutine handler just the same.
    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    async def lsp_workspace__execute_command(  # type: ignore[override]
        self, params: types.ExecuteCommandParams
    ) -> Any:
        assert self.on_execute_command is not None
        return await self.on_execute_command(params, self.msg_id)
