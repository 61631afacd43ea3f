"""stdin/stdout as the SDK's asyncio streams, with the writes of one turn of the event loop
joined into one.

The SDK writes each JSON-RPC message on its own (`write`, then `drain`): a step of the agent
that sends a `tool_call`, its `tool_call_update` and a message chunk wakes the editor three
times, and on a busy machine each wake-up costs the agent's next request a context switch.
`lsp/server.py`'s `BatchedWriter` does the same for the LSP edge: messages leave in order,
together, once the step that produced them yields.
"""

from __future__ import annotations

import asyncio
import sys

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


async def stdio_streams() -> tuple[asyncio.StreamReader, BatchedStreamWriter]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=STDIN_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout)
    return reader, BatchedStreamWriter(transport, protocol, loop)
