"""Server memory with subagents running: RSS after a plain turn, then while a `task`
call runs 3 subagents in parallel (each held open by a slow stream from the fake), same
server. Run: `python benchmarks/bench_subagents.py`."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

from common import REPO, SMALL_REPO, LspClient, init_git, rss_mb, server_env, temp_root, write_user_config

sys.path.insert(0, str(REPO / "tests" / "fakes"))
from anthropic_server import FakeAnthropicServer, reply

CODER_CMD = [sys.executable, "-m", "coder_ls"]


async def main() -> None:
    with FakeAnthropicServer() as fake, temp_root() as tmp:
        root = init_git(tmp / "ws", dict(SMALL_REPO))
        write_user_config(root, {"permissions": "yolo"})
        env = {"ANTHROPIC_API_KEY": "x", "ANTHROPIC_BASE_URL": fake.url}
        client = await LspClient.spawn(CODER_CMD, cwd=root, env=server_env(root, env))
        try:
            await client.initialize(root)
            fake.push(reply("hi"))
            await client.execute("coder.input", {"text": "hello"}, token="t0", timeout=60)
            after_turn = rss_mb(client.pid)
            jobs = [{"prompt": f"slow job {i}"} for i in range(3)]
            fake.push(*[{"text": ["a"] * 40, "delayMs": 50, "when": f"slow job {i}"} for i in range(3)])
            call: dict[str, Any] = {"id": "toolu_b1", "name": "task", "input": {"tasks": jobs}}
            fake.push(reply("", toolCalls=[call]), reply("done"))
            turn = asyncio.ensure_future(client.execute("coder.input", {"text": "run"}, token="t1", timeout=60))
            peak = 0.0
            deadline = time.monotonic() + 30
            while not turn.done() and time.monotonic() < deadline:
                peak = max(peak, rss_mb(client.pid) or 0.0)
                await asyncio.sleep(0.02)
            result = await turn
            print(
                f"after a plain turn: {after_turn:.1f} MB; peak with 3 subagents running: {peak:.1f} MB "
                f"(+{peak - (after_turn or 0):.1f} MB); turn {result['status']}, max in flight {fake.max_in_flight}"
            )
        finally:
            await client.close()


if __name__ == "__main__":
    asyncio.run(main())
