"""The server's loop ends within its grace when a task will not (coder_ls/lsp/loop.py): a
server whose client has left must not stay alive because one task swallows its
cancellation (asyncio.run waits for such a task forever)."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from coder_ls.lsp.loop import run_until_client_leaves


async def _stubborn() -> None:
    while True:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            continue  # what a buggy task does: it never ends


async def _polite(ended: list[str]) -> None:
    try:
        await asyncio.sleep(3600)
    finally:
        ended.append("polite")


def test_a_task_that_ignores_its_cancellation_does_not_keep_the_server(caplog):
    ended: list[str] = []

    async def main() -> None:
        asyncio.get_running_loop().create_task(_stubborn(), name="stubborn")
        asyncio.get_running_loop().create_task(_polite(ended), name="polite")
        await asyncio.sleep(0.05)  # the client leaves: the read loop returns

    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="coder_ls.lsp.loop"):
        run_until_client_leaves(main(), grace=0.5)
    assert time.monotonic() - started < 5
    assert ended == ["polite"], "a task that ends when cancelled still runs its clean-up"
    assert any("stubborn" in r.getMessage() for r in caplog.records), caplog.text


def test_the_read_loops_error_still_reaches_the_caller():
    async def main() -> None:
        raise BrokenPipeError("client gone")

    with pytest.raises(BrokenPipeError):
        run_until_client_leaves(main(), grace=0.5)
