"""stdin/stdout as the SDK's asyncio streams, with the writes of one turn of the event loop
joined into one, and every line checked before the SDK reads it.

The SDK writes each JSON-RPC message on its own (`write`, then `drain`): a step of the agent
that sends a `tool_call`, its `tool_call_update` and a message chunk wakes the editor three
times, and on a busy machine each wake-up costs the agent's next request a context switch.
`lsp/server.py`'s `BatchedWriter` does the same for the LSP edge: messages leave in order,
together, once the step that produced them yields.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Callable
from typing import Any

from coder_ls.protocol.jsonrpc import Rejected, parse_body

log = logging.getLogger(__name__)

STDIN_LIMIT = 50 * 1024 * 1024  # the SDK's default: a prompt may embed whole files


class BatchedStreamWriter(asyncio.StreamWriter):
    def __init__(
        self,
        transport: asyncio.WriteTransport,
        protocol: asyncio.BaseProtocol,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        super().__init__(transport, protocol, None, loop)
        self._loop_ = loop
        self._pending: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._pending:
            self._loop_.call_soon(self._flush)
        self._pending.append(bytes(data))

    def _flush(self) -> None:
        data, self._pending = b"".join(self._pending), []
        if data and not self.transport.is_closing():
            super().write(data)

    # drain() is the stream's: the joined write lands in the transport at the next turn of the
    # loop, and from then on a client that reads slowly pauses the writers as before.

    def close(self) -> None:
        self._flush()
        super().close()


class CheckedReader(asyncio.StreamReader):
    """stdin as the SDK reads it (a message a line, `readuntil`), with each line that is not
    a JSON-RPC 2.0 message answered here as `protocol/jsonrpc.py` says (the LSP edge gives
    the same answers) and kept from the SDK: its reader logged a line that is not UTF-8 or
    not JSON and dropped it, so the client waited forever, and a line that is JSON but not
    an object ended the connection. (A line over `STDIN_LIMIT`, which the SDK reads in
    pieces, is not checked.)"""

    answer: Callable[[bytes], None] | None = None  # writes one line to the client

    async def readuntil(self, separator: Any = b"\n") -> bytes:
        while True:
            try:
                line = await super().readuntil(separator)
            except asyncio.IncompleteReadError as exc:  # the last line, without its newline
                if exc.partial.strip() and self._refused(exc.partial):
                    raise asyncio.IncompleteReadError(b"", exc.expected) from None
                raise
            if not line.strip() or not self._refused(line):
                return line

    def _refused(self, line: bytes) -> bool:
        data = parse_body(line.strip())
        if not isinstance(data, Rejected):
            return False
        log.warning("%s (id %s)", data.message, json.dumps(data.answer_id))
        if data.answer and self.answer is not None:
            self.answer(json.dumps(data.error()).encode() + b"\n")
        return True


async def stdio_streams() -> tuple[CheckedReader, BatchedStreamWriter]:
    loop = asyncio.get_running_loop()
    reader = CheckedReader(limit=STDIN_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout)
    writer = BatchedStreamWriter(transport, protocol, loop)
    reader.answer = writer.write
    return reader, writer
