"""Reading one JSON-RPC 2.0 message body, for both edges (LSP's `lsp/stream.py`, ACP's
`acp/stdio.py`): the decoded message, or the error JSON-RPC 2.0 prescribes for it.

- a body that is not UTF-8 (strictly: no encoded surrogates, which `json.loads` on bytes
  lets through): `-32700` Parse error, under the request's id when that id can still be
  read (the body decoded with U+FFFD for the bad bytes is JSON, an object with a `method`
  and a usable `id`: the client's request then ends instead of waiting), else `id: null`.
  A client's response that is not UTF-8 is never answered;
- a body that is not JSON: `-32700` with `id: null`;
- a body that is JSON but not a JSON-RPC 2.0 message (not an object, `jsonrpc` not `"2.0"`,
  an `id` that is not a string, an integer or null, a request without a string `method`):
  `-32600` Invalid Request, under the message's id when that id is usable, else `id: null`.
  A well-formed response from the client is never answered.

Nothing here imports pygls or the ACP SDK.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


class Rejected(NamedTuple):
    """Why a body is not a message, and the answer: `answer_id` under `code`, or no answer
    (`answer` False: it was a response of the client's to one of our requests)."""

    answer_id: Any
    code: int
    message: str
    answer: bool = True

    def error(self) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": self.answer_id, "error": {"code": self.code, "message": self.message}}


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


def _not_utf8(body: bytes, exc: UnicodeDecodeError) -> Rejected:
    why = f"Parse error: the message body is not valid UTF-8 ({exc.reason}: byte {exc.start})"
    try:
        data = json.loads(body.decode("utf-8", errors="replace"))
    except ValueError:
        return Rejected(None, PARSE_ERROR, why)
    if not isinstance(data, dict):
        return Rejected(None, PARSE_ERROR, why)
    if "method" not in data and "id" in data:
        return Rejected(None, PARSE_ERROR, why, answer=False)  # the client's response: never answered
    msg_id = data.get("id")
    return Rejected(msg_id if usable_id(msg_id) else None, PARSE_ERROR, why)


def parse_body(body: bytes) -> Any:
    """The JSON value of a message body that is a JSON-RPC 2.0 message, else `Rejected`."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _not_utf8(body, exc)
    try:
        data = json.loads(text)
    except ValueError as exc:
        return Rejected(None, PARSE_ERROR, f"Parse error: the message body is not valid JSON ({exc})")
    problem = invalid_request(data)
    if problem is not None:
        answer_id, why = problem
        return Rejected(answer_id, INVALID_REQUEST, f"Invalid Request: {why}")
    return data
