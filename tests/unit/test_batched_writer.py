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


def test_a_write_a_signal_cuts_short_is_finished() -> None:
    """With PYTHONUNBUFFERED=1 (set on many machines and by editors) the server's stdout is a
    raw FileIO: a blocking write to a pipe that a signal interrupts after some bytes went
    through returns that count, and the rest was lost — a 340 KB catalog reply cut at
    131,011 bytes, the next message glued on, the client stuck (benchmarks, 1 start in 10).
    A real pipe, a slow reader, and signals with a Python handler during the write."""
    import os
    import signal
    import threading
    import time

    read_fd, write_fd = os.pipe()
    out = io.FileIO(write_fd, "wb", closefd=True)
    payload = bytes(range(256)) * 4096  # 1 MiB: many pipe-buffers' worth
    got = bytearray()
    handled: list[int] = []
    previous = signal.signal(signal.SIGUSR1, lambda *_: handled.append(1))
    main = threading.get_ident()
    done = threading.Event()

    def reader() -> None:
        while chunk := os.read(read_fd, 65536):
            got.extend(chunk)
            time.sleep(0.002)  # slow: the writer blocks on a full pipe again and again

    def interrupter() -> None:
        while not done.is_set():
            signal.pthread_kill(main, signal.SIGUSR1)
            time.sleep(0.001)

    threads = [threading.Thread(target=reader), threading.Thread(target=interrupter)]
    for t in threads:
        t.start()
    try:
        BatchedWriter(out).write(payload)  # no loop running: written at once
    finally:
        done.set()
        out.close()
        threads[1].join()
        threads[0].join()
        os.close(read_fd)
        signal.signal(signal.SIGUSR1, previous)
    assert handled, "no signal arrived during the write"
    assert bytes(got) == payload
