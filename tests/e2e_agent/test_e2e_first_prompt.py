"""A prompt sent the moment the server is initialized (as ACP clients and scripts do).

The warm-up starts at `initialized`, in the background, and an early turn waits for that
same client construction (aiohttp's import; the SDK is no longer imported) instead of
starting its own later: the request reaches the model within 300 ms of the prompt, or,
on a machine where the import itself takes longer, within 300 ms of that import's end.
The figure at once, with its baseline, is in benchmarks (`first_turn_at_once`). The server's debug log (a
file) says when the warm-up began (against when the engine was built at `initialized`)
and when the import was done; the fake says when the request came.
"""

from __future__ import annotations

import datetime
import re
import sys
import time
from pathlib import Path

import harness
import pytest
from agent_e2e import api_env
from anthropic_server import FakeAnthropicServer, reply
from harness import lsp_session

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]

GOAL = 0.3  # seconds
WARMUP = "coder_ls.lsp.warmup"
_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) \w+ ([\w.]+): (.*)$")


def _logged(log: Path, logger: str, starts: str) -> float:
    """The wall-clock time of the server's log line of `logger` starting with `starts`."""
    for line in log.read_text().splitlines():
        m = _STAMP.match(line)
        if m and m.group(2) == logger and m.group(3).startswith(starts):
            stamp = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f")
            return stamp.timestamp()
    raise AssertionError(f"no warm-up line {starts!r} in the server's log:\n{log.read_text()[-3000:]}")


async def test_a_prompt_sent_at_once_after_initialized_reaches_the_model_within_300_ms(
    fake: FakeAnthropicServer, ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "server.log"
    server = [sys.executable, "-m", "coder_ls", "--log-level", "debug", "--log-file", str(log)]
    monkeypatch.setattr(harness, "SERVER", server)
    fake.push(reply("Hello at once."))
    async with lsp_session(ws, env=api_env(fake)) as s:  # returns right after `initialized`
        initialized_wall, sent = time.time(), time.monotonic()
        result = await s.execute("coder.input", {"text": "say hello"})
        assert result["status"] == "completed" and result["reply"] == "Hello at once.", result
        (request,) = fake.message_requests
    # from the engine built at `initialized` (the "serving" line) to the warm-up's start:
    # a turn, not the warm-up, would build the client if the prompt came in between
    began = _logged(log, WARMUP, "warm-up: started") - _logged(log, "coder_ls.lsp.server", "coder-ls ")
    ready = _logged(log, WARMUP, "warm-up: anthropic provider") - initialized_wall
    arrived = request.time - sent
    assert began < 0.1, f"the warm-up began {began:.3f} s after the server was initialized"
    assert arrived < GOAL or arrived - ready < GOAL, (
        f"prompt -> request {arrived:.3f} s; the warm-up's import was done at {ready:.3f} s"
    )
