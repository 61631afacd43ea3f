"""One frame around every model stream the agent reads (a turn's step, `/compact`, `/btw`).

What each reader used to repeat, or forgot:

- **Retries are reported.** A `Retrying` item becomes the progress message
  "Retrying in N s (reason)", whoever reads the stream (`/compact` showed nothing).
- **A stall is reported.** When no item has arrived for `STALL_NOTICE` seconds (a model
  thinking at length, a slow network, a dead connection), the progress says so and how
  long the request may still stay silent (`requestTimeoutSeconds`) before it is given up
  and retried; it says so again every `STALL_NOTICE` seconds. A watchdog timer re-armed at
  each item does it: nothing per item but a timer reset.
- **The stream is closed** (its HTTP response with it) however the reading ends.

The items themselves pass through unchanged (`Retrying` too, for readers that care).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable

from coder_ls.llm.base import Provider, ProviderRequest, Retrying, StreamItem

__all__ = ["STALL_NOTICE", "watched"]

STALL_NOTICE = 10.0  # seconds of silence before the progress says so


async def watched(
    provider: Provider,
    request: ProviderRequest,
    report: Callable[[str], None],
    *,
    stall_notice: float = STALL_NOTICE,
) -> AsyncIterator[StreamItem]:
    """`provider.stream(request)`, with retries and stalls reported (module docstring)."""
    loop = asyncio.get_running_loop()
    notice = min(stall_notice, (request.timeout_seconds or 2 * stall_notice) / 2)
    last = time.monotonic()
    timer: asyncio.TimerHandle | None = None

    def stalled() -> None:
        nonlocal timer
        silent = time.monotonic() - last
        limit = f" (given up after {request.timeout_seconds:.0f} s)" if request.timeout_seconds else ""
        report(f"Waiting for the model: no response for {silent:.0f} s{limit}")
        timer = loop.call_later(notice, stalled)

    stream = provider.stream(request)
    timer = loop.call_later(notice, stalled)
    try:
        async for item in stream:
            last = time.monotonic()
            timer.cancel()
            timer = loop.call_later(notice, stalled)
            if isinstance(item, Retrying):
                report(f"Retrying in {item.delay_seconds:.0f}s ({item.reason})")
            yield item
    finally:
        timer.cancel()
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
