"""The door of `coder-ls --tcp` (contract section 21): a connection proves it knows the
token before the server reads anything else from it.

Whoever connects to the port drives the agent, its shell included, as the server's
user; on a shared machine any local user can connect to 127.0.0.1. So the server holds a
token (`CODER_LS_TOKEN`, else a random one printed once on stderr as
`coder-ls: token <TOKEN>`), and the first frame of a connection must be an LSP
`initialize` request carrying it in `initializationOptions.token`. Anything else (another
method, a wrong or missing token, bytes that are not an LSP frame such as
`POST / HTTP/1.1`, a header or body over the limits, nothing within `HELLO_SECONDS`)
closes the connection without a byte in answer, and the server goes on listening.

The check stands before the read loop (`lsp/stream.py`), which never sees a refused
connection: `admit` reads the first frame itself, bounded, and hands the loop a reader
that replays it (the token taken out, so that it never reaches the settings, the logs
or the session) before the rest of the stream.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import os
import re
import secrets
import sys
from collections.abc import Mapping
from typing import Any

log = logging.getLogger(__name__)

__all__ = ["HELLO_SECONDS", "ReplayReader", "admit", "server_token"]

HELLO_SECONDS = 10.0  # the first frame arrives within this, or the connection is closed
MAX_HEADER_LINE = 1024
MAX_HEADER_LINES = 8
MAX_HELLO_BYTES = 1 << 20  # an `initialize` is a few kilobytes; a megabyte is generous
_HEADER = re.compile(rb"^([A-Za-z][A-Za-z0-9-]*)[ \t]*:[ \t]*([^\r\n]*)\r?\n$")
TOKEN_VARIABLE = "CODER_LS_TOKEN"


def server_token(env: Mapping[str, str] | None = None, err: Any = None) -> str:
    """`CODER_LS_TOKEN` when set (not printed: the user holds it), else a new random
    token printed on stderr for the user to give the client."""
    environ = os.environ if env is None else env
    given = (environ.get(TOKEN_VARIABLE) or "").strip()
    if given:
        return given
    token = secrets.token_urlsafe(24)
    stream = err if err is not None else sys.stderr
    stream.write(f"coder-ls: token {token}\n")
    stream.flush()
    return token


class ReplayReader:
    """The first frame again (as the gate rewrote it), then the connection's stream."""

    def __init__(self, first: bytes, reader: asyncio.StreamReader) -> None:
        self._buffer = bytearray(first)
        self._reader = reader

    async def readline(self) -> bytes:
        if self._buffer:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                return line
            head = bytes(self._buffer)
            self._buffer.clear()
            return head + await self._reader.readline()
        return await self._reader.readline()

    async def readexactly(self, n: int) -> bytes:
        if self._buffer:
            take = bytes(self._buffer[:n])
            del self._buffer[:n]
            if len(take) == n:
                return take
            return take + await self._reader.readexactly(n - len(take))
        return await self._reader.readexactly(n)


async def _read_line(reader: asyncio.StreamReader) -> bytes | None:
    """One header line of at most `MAX_HEADER_LINE` bytes, else None."""
    try:
        line = await reader.readuntil(b"\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
        return None
    return line if len(line) <= MAX_HEADER_LINE else None


async def _first_frame(reader: asyncio.StreamReader) -> bytes | None:
    """The body of the first LSP frame, read within the limits; None when the bytes are
    not one (an HTTP request line is not a header: it fails the first check)."""
    length: int | None = None
    for _ in range(MAX_HEADER_LINES + 1):
        line = await _read_line(reader)
        if line is None:
            return None
        if line in (b"\r\n", b"\n"):
            break
        found = _HEADER.match(line)
        if found is None:
            return None
        if found.group(1).lower() == b"content-length":
            value = found.group(2).strip()
            if not value.isdigit() or length is not None:
                return None
            length = int(value)
    else:
        return None
    if length is None or not 0 < length <= MAX_HELLO_BYTES:
        return None
    try:
        return await reader.readexactly(length)
    except asyncio.IncompleteReadError:
        return None


def _checked(body: bytes, token: str) -> bytes | None:
    """The `initialize` request without its token, when it carries the right one."""
    try:
        message = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or message.get("method") != "initialize":
        return None
    if "id" not in message:
        return None
    params = message.get("params")
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    given = options.get("token") if isinstance(options, dict) else None
    if not isinstance(given, str) or not hmac.compare_digest(given.encode(), token.encode()):
        return None
    assert isinstance(params, dict) and isinstance(options, dict)
    rest = {k: v for k, v in options.items() if k != "token"}
    params["initializationOptions"] = rest or None
    return json.dumps(message).encode()


async def admit(reader: asyncio.StreamReader, token: str, timeout: float = HELLO_SECONDS) -> ReplayReader | None:
    """A reader for the read loop when the connection's first frame is an `initialize`
    carrying `token`; else None (the caller closes the connection without answering)."""
    try:
        body = await asyncio.wait_for(_first_frame(reader), timeout)
    except TimeoutError:
        log.warning("tcp: a connection sent no initialize within %.0f s: closed", timeout)
        return None
    checked = _checked(body, token) if body is not None else None
    if checked is None:
        log.warning("tcp: a connection did not open with an initialize carrying the token: closed unanswered")
        return None
    return ReplayReader(b"Content-Length: %d\r\n\r\n" % len(checked) + checked, reader)
