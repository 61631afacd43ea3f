"""A writer killed with SIGKILL leaves a readable log that loses at most its last line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from coder_ls.store.log import MessageEntry, SessionLog, read_log

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")

WRITER = r"""
import sys
from coder_ls.protocol.messages import Message, TextBlock
from coder_ls.store.log import MessageEntry, SessionLog, ShellEntry

root = sys.argv[1]
log = SessionLog.create(root, "crash", root)
i = 0
while True:
    # lines of very different sizes, some far larger than a page
    pad = "x" * ((i * 7919) % 50_000)
    role = "user" if i % 2 == 0 else "assistant"
    log.append(MessageEntry(message=Message(role=role, content=[TextBlock(text=f"{i}|{pad}")]),
                            submission_id=f"sub{i // 10}"))
    i += 1
    if i % 10 == 0:  # a submission boundary
        log.sync()
        print(i, flush=True)
"""


def run_and_kill(root: Path, at_least: int) -> int:
    """Start the writer, SIGKILL it once it reports `at_least` synced entries; return that count."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(root)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None
    synced = 0
    try:
        for line in proc.stdout:
            synced = int(line)
            if synced >= at_least:
                break
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    return synced


@pytest.mark.parametrize("at_least", [10, 230, 1000])
def test_sigkill_mid_stream_leaves_a_readable_log(tmp_path: Path, at_least: int) -> None:
    synced = run_and_kill(tmp_path, at_least)
    path = tmp_path / ".coder" / "sessions" / "crash.jsonl"
    loaded = read_log(path)  # never raises
    assert loaded.skipped_lines == 0
    numbers = [int(m.text().split("|", 1)[0]) for m in loaded.context]
    # a contiguous prefix: nothing in the middle is lost, only (at most) the line in flight
    assert numbers == list(range(len(numbers)))
    assert len(numbers) >= synced
    assert all(isinstance(e, MessageEntry) for e in loaded.entries)

    # the session can be reopened and continued; a torn tail is cut first
    with SessionLog.open(tmp_path, "crash") as log:
        assert log.size == loaded.size
        log.append(loaded.entries[0])
        log.sync()
    again = read_log(path)
    assert not again.torn_tail and again.skipped_lines == 0
    assert again.message_count == len(numbers) + 1
