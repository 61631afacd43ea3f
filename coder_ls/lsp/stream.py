"""Reading the client's JSON-RPC stream: framing, parse errors, the initialize gate.

pygls 2.1's reader (`pygls.io_.run_async`) drops what it cannot read without a word: a
header without a valid Content-Length makes it skip the message and glue its body to the
next one, a body that is not JSON, or a request whose params do not fit the LSP types
(`workspace/executeCommand` without `command`), is only logged, so the client waits
forever. This loop answers instead, per JSON-RPC 2.0 and the LSP base protocol:

- a body that is not UTF-8, not JSON, or not a JSON-RPC 2.0 message: the answer
  `protocol/jsonrpc.py` gives (the same as the ACP edge's): `-32700` Parse error, under the
  request's id when a body that is not UTF-8 still shows it, else `id: null`; `-32600`
  Invalid Request under the message's usable id. A well-formed response from the client is
  never answered;
- a header block without a usable Content-Length: `-32700` with `id: null`, then the
  stream resynchronises on the next `Content-Length:` header;
- a request whose params cannot be decoded: the decoding error with the request's id;
- a request before `initialize`: `-32002` ServerNotInitialized (notifications before it
  are dropped, except `exit`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcException

from coder_ls.protocol.jsonrpc import PARSE_ERROR, Rejected, parse_body

if TYPE_CHECKING:
    import threading

    from pygls.io_ import AsyncReader
    from pygls.protocol import JsonRPCProtocol

log = logging.getLogger(__name__)

SERVER_NOT_INITIALIZED = -32002
INTERNAL_ERROR = -32603

_CONTENT_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*([^\r\n]*)", re.IGNORECASE)
_OTHER_HEADER = re.compile(rb"^[A-Za-z][A-Za-z0-9-]*[ \t]*:")
_BEFORE_INITIALIZE = ("initialize", "exit")


def send_error(protocol: JsonRPCProtocol, msg_id: Any, code: int, message: str) -> None:
    protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


def _decoding_problem(exc: BaseException) -> str:
    cause = exc.__cause__
    if cause is not None:
        try:
            import cattrs

            lines = cattrs.transform_error(cause)  # type: ignore[arg-type]
            return "; ".join(lines)
        except Exception:
            return str(cause)
    return str(exc)


class Gate:
    """Whether `initialize` has been received (requests before it get -32002)."""

    def __init__(self) -> None:
        self.initialize_seen = False


def handle_body(protocol: JsonRPCProtocol, gate: Gate, body: bytes) -> None:
    data = parse_body(body)
    if isinstance(data, Rejected):
        note = "" if data.answer else " (the client's response: not answered)"
        log.warning("%s (id %s)%s", data.message, json.dumps(data.answer_id), note)
        if data.answer:
            send_error(protocol, data.answer_id, data.code, data.message)
        return
    method, has_id = data.get("method"), "id" in data
    if isinstance(method, str) and not gate.initialize_seen and method not in _BEFORE_INITIALIZE:
        if has_id:
            send_error(
                protocol,
                data["id"],
                SERVER_NOT_INITIALIZED,
                f"{method}: the server is not initialized (send initialize first)",
            )
        return  # a notification before initialize is dropped
    if method == "initialize":
        gate.initialize_seen = True
    try:
        message = json.loads(body.decode("utf-8"), object_hook=protocol.structure_message)
    except JsonRpcException as exc:
        log.warning("cannot decode %s: %s", method, _decoding_problem(exc))
        if has_id and isinstance(method, str):
            send_error(protocol, data["id"], exc.code, f"{method}: invalid params: {_decoding_problem(exc)}")
        return
    except Exception as exc:
        log.exception("cannot decode a message")
        if has_id and isinstance(method, str):
            send_error(protocol, data["id"], INTERNAL_ERROR, f"{method}: cannot decode the message: {exc}")
        return
    try:
        protocol.handle_message(message)
    except Exception:
        log.exception("Unable to handle message")


async def read_messages(stop_event: threading.Event, reader: AsyncReader, protocol: JsonRPCProtocol) -> None:
    """The read loop (replaces pygls.io_.run_async, for stdio and TCP)."""
    gate = Gate()
    length: int | None = None
    seen = False  # header lines since the last message
    resync = False  # a bad header block was answered: its body may be glued to the next header

    while not stop_event.is_set():
        line = await reader.readline()
        if not line:
            break
        found = _CONTENT_LENGTH.search(line)
        if found is not None:
            if found.start() > 0 and not resync:  # junk before the header: a lost message
                send_error(protocol, None, PARSE_ERROR, "Parse error: bytes before a Content-Length header")
            resync = False
            value = found.group(1).strip()
            length = int(value) if value.isdigit() else None
            seen = True
            continue
        if line.strip():
            seen = True
            if not _OTHER_HEADER.match(line):
                length = None  # not a header: this block is broken
            continue
        if not seen:
            continue  # a stray blank line between messages
        if length is None:
            send_error(protocol, None, PARSE_ERROR, "Parse error: a message header without a valid Content-Length")
            seen, resync = False, True
            continue
        try:
            body = await reader.readexactly(length)
        except asyncio.IncompleteReadError:  # a TCP stream that ended
            break
        seen, want, length = False, length, None
        if len(body) < want:
            break  # end of stream
        handle_body(protocol, gate, body)
