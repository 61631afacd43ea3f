"""Warm the model provider while the server is idle, so the first turn does not wait.

Building the Anthropic provider's HTTP client imports `aiohttp` (~0.15 s; before we had a
client of our own, `import anthropic` took 1–3 s on a small machine). `initialize` must
not pay it (section 1 of the contract), nor the first `coder.input`. So once the server
is initialized and its engine built, `start` schedules a task at once (`DELAY`, 0 by
default: a prompt sent right after `initialized`, as ACP clients and scripts do, finds
the client built or being built, and waits only for the rest) that builds the provider a
turn would use (`Agent.provider_for_config`, the same cache) and calls its `prepare()`:
the import and the client construction run in a worker thread, the event loop stays free.

Then, still in the background, the models the account can use are listed
(`GET /v1/models`, at most once per cache lifetime, see `coder_ls.llm.catalog`), and a
configured model that is deprecated gets its one warning (`window/showMessage`) with
its end-of-life date and the model to switch to. A turn never waits for the listing.

Nothing heavy is warmed for the `scripted` provider, or when the provider cannot be
built (no API key: the first turn says so). A turn that starts before the warm-up ends
simply waits for the same construction (the provider serialises it).

The setting `"warmup": false` (or `CODER_WARMUP=0` in the server's environment, which
wins over the setting) turns the warm-up off: the first turn then builds the client
itself, and the models are listed then (benchmarks use it as the baseline).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from coder_ls.engine.executor import Engine

__all__ = ["DELAY", "start", "stop", "warm"]

log = logging.getLogger(__name__)

DELAY = 0.0  # seconds after `initialized`


def enabled(engine: Engine) -> bool:
    """`CODER_WARMUP` in the server's environment when set, else the `warmup` setting."""
    env = (engine.env.get("CODER_WARMUP") or "").strip().lower()
    if env:
        return env not in ("0", "off", "false", "no")
    return bool(engine.config.warmup)


async def warm(engine: Engine, delay: float = DELAY) -> None:
    """Build and prepare the configured provider (see the module docstring)."""
    await asyncio.sleep(delay)
    log.debug("warm-up: started")
    from coder_ls.llm.base import ProviderError
    from coder_ls.llm.models import provider_name

    if provider_name(engine.config) != "anthropic":
        return
    from coder_ls.agent.runner import Agent

    if not isinstance(engine.agent, Agent):
        return
    started = time.perf_counter()
    try:
        provider, model = engine.agent.provider_for_config(engine.config)
    except ProviderError as exc:
        log.debug("warm-up skipped: %s", exc.message)
        return
    prepare = getattr(provider, "prepare", None)
    if prepare is None:
        return
    log.debug("warm-up: preparing the %s provider (its HTTP client)", provider.name)
    try:
        await prepare()
    except Exception:  # a broken install: the first turn reports it
        log.debug("warm-up failed", exc_info=True)
        return
    elapsed = 1000 * (time.perf_counter() - started)
    log.debug("warm-up: %s provider for %s ready in %.0f ms", provider.name, model, elapsed)
    refreshing = engine.agent.refresh_models_soon(provider)
    if refreshing is not None:
        await refreshing
    model = provider.catalog.resolve(engine.config.model)  # the listing may name a newer one
    warning = provider.catalog.take_warning(model)
    if warning:
        engine.host.show_message("warning", warning)


def start(engine: Engine) -> asyncio.Task[None] | None:
    """Schedule the warm-up on the running loop (None when it is turned off)."""
    if not enabled(engine):
        return None
    return asyncio.get_running_loop().create_task(warm(engine))


async def stop(task: asyncio.Task[None] | None) -> None:
    if task is None or task.done():
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
