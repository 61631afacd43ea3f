"""Reading the client's JSON-RPC stream: framing, parse errors, the initialize gate.

pygls 2.1's reader (`pygls.io_.run_async`) drops what it cannot read without a word: a
header without a valid Content-Length makes it skip the message and glue its body to the
next one, a body that is not JSON, or a request whose params do not fit the LSP types
(`workspace/executeCommand` without `command`), is only logged, so the client waits
forever. This loop answers instead, per JSON-RPC 2.0 and the LSP base protocol:

- a body that is not UTF-8 (strictly: no encoded surrogates, which `json.loads` on bytes
  lets through) or not JSON: `-32700` Parse error with `id: null`;
- a body that is JSON but not a JSON-RPC 2.0 message (not an object, `jsonrpc` not
  `"2.0"`, an `id` that is not a string, an integer or null, a request without a string
  `method`): `-32600` Invalid Request, under the message's id when that id is usable,
  else `id: null`. A well-formed response from the client is never answered;
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

if TYPE_CHECKING:
    import threading

    from pygls.io_ import AsyncReader
    from pygls.protocol import JsonRPCProtocol

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
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


def usable_id(value: Any) -> bool:
    """A JSON-RPC id: a string, an integer (not a boolean, not a fraction) or null."""
    return value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def invalid_request(data: Any) -> tuple[Any, str] | None:
    """(the id to answer under, why) when `data` is not a JSON-RPC 2.0 message; else None."""
    if not isinstance(data, dict):
        return None, "a message must be a JSON object"
    msg_id = data.get("id")
    is_response = "method" not in data and ("result" in data or "error" in data)
    answer_id = msg_id if usable_id(msg_id) and not is_response else None  # a response's id is ours
    if data.get("jsonrpc") != "2.0":
        return answer_id, 'the "jsonrpc" member must be exactly "2.0"'
    if not usable_id(msg_id):
        return None, f'an "id" must be a string, an integer or null, not {json.dumps(msg_id)[:40]}'
    if "method" in data:
        if not isinstance(data["method"], str):
            return answer_id, 'the "method" member must be a string'
        return None
    if is_response and "id" in data:
        return None  # a response to one of our requests
    return answer_id, 'a request needs a "method" (a response, a "result" or an "error")'


def handle_body(protocol: JsonRPCProtocol, gate: Gate, body: bytes) -> None:
    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as exc:
        log.warning("a message body is not UTF-8: %s", exc)
        send_error(protocol, None, PARSE_ERROR, f"Parse error: the message body is not valid UTF-8 ({exc})")
        return
    except ValueError as exc:
        log.warning("a message body is not JSON: %s", exc)
        send_error(protocol, None, PARSE_ERROR, f"Parse error: the message body is not valid JSON ({exc})")
        return
    problem = invalid_request(data)
    if problem is not None:
        answer_id, why = problem
        log.warning("invalid JSON-RPC message (id %s): %s", json.dumps(answer_id), why)
        send_error(protocol, answer_id, INVALID_REQUEST, f"Invalid Request: {why}")
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
