"""The server's stdout writer: the messages of one turn of the event loop in one write."""

from __future__ import annotations

import asyncio
import io

from coder_ls.lsp.writer import BatchedWriter


class Recorder(io.BytesIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self.writes.append(bytes(data))
        return len(data)


async def test_messages_sent_together_go_out_in_one_write_in_order() -> None:
    out = Recorder()
    w = BatchedWriter(out)
    for i in range(3):
        w.write(b"m%d;" % i)
    await asyncio.sleep(0)
    w.write(b"m3;")  # a later turn of the loop, within HOLD: the same write
    assert out.writes == []  # not yet: notifications wait for company
    await asyncio.sleep(BatchedWriter.HOLD * 3)
    assert out.writes == [b"m0;m1;m2;m3;"]
    w.write(b"later")
    await asyncio.sleep(BatchedWriter.HOLD * 3)
    assert out.writes[-1] == b"later"


async def test_an_urgent_message_leaves_at_once_after_what_is_pending() -> None:
    """A response (the client waits on it) never waits for company, nor overtakes the
    notifications sent before it."""
    out = Recorder()
    w = BatchedWriter(out)
    w.write(b"event;")
    w.write(b"response;", urgent=True)
    assert out.writes == [b"event;response;"]
    await asyncio.sleep(BatchedWriter.HOLD * 3)
    assert out.writes == [b"event;response;"]  # the cancelled timer writes nothing more


def test_outside_a_running_loop_each_message_is_written_at_once() -> None:
    out = Recorder()
    BatchedWriter(out).write(b"now")
    assert out.writes == [b"now"]


async def test_a_closed_client_is_logged_not_raised_and_nothing_more_is_written(caplog) -> None:
    class Broken(Recorder):
        def write(self, data: bytes) -> int:  # type: ignore[override]
            super().write(data)
            raise BrokenPipeError

    out = Broken()
    w = BatchedWriter(out)
    w.write(b"a")
    await asyncio.sleep(BatchedWriter.HOLD * 3)
    w.write(b"b")
    await asyncio.sleep(BatchedWriter.HOLD * 3)
    assert out.writes == [b"a"]
    assert "connection to the client is lost" in caplog.text
