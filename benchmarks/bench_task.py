"""Wall time of a 12-step `/task` whose steps are independent, at `tasks.maxConcurrency`
1 and 3, against a fake that takes about 0.5 s per response (issue 11's figure).
Run: `python benchmarks/bench_task.py`."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

from common import REPO, SMALL_REPO, LspClient, init_git, server_env, temp_root, write_user_config

sys.path.insert(0, str(REPO / "tests" / "fakes"))
from anthropic_server import FakeAnthropicServer, reply

CODER_CMD = [sys.executable, "-m", "coder_ls"]
STEPS = 12
SLOW = {"delayMs": 60}  # before each of a response's ~8 SSE events: about 0.5 s a response


def script() -> list[dict[str, Any]]:
    steps = [{"id": f"s{i}", "title": f"Step {i}", "prompt": f"work item {i:02d} please"} for i in range(STEPS)]
    plan = {"id": "toolu_p", "name": "plan", "input": {"steps": steps}}
    out: list[dict[str, Any]] = [{**reply("", toolCalls=[plan]), "when": "Plan how to reach"}]
    out.append({**reply("planned"), "when": "Plan how to reach"})
    out += [{"text": ["done ", f"{i}"], **SLOW, "when": f"work item {i:02d} please"} for i in range(STEPS)]
    out.append({**reply("# Report"), "when": "Write the final report"})
    return out


async def run(concurrency: int) -> float:
    with FakeAnthropicServer() as fake, temp_root() as tmp:
        root = init_git(tmp / "ws", dict(SMALL_REPO))
        write_user_config(root, {"permissions": "yolo", "tasks": {"maxConcurrency": concurrency}})
        env = {"ANTHROPIC_API_KEY": "x", "ANTHROPIC_BASE_URL": fake.url}
        client = await LspClient.spawn(CODER_CMD, cwd=root, env=server_env(root, env))
        try:
            await client.initialize(root)
            fake.push(*script())
            t = time.monotonic()
            r = await client.execute("coder.input", {"text": "/task twelve items"}, token="t", timeout=120)
            took = time.monotonic() - t
            if r["status"] != "completed":
                raise RuntimeError(f"/task {r['status']}: {r.get('reply')}")
            return took
        finally:
            await client.close()


async def main() -> None:
    one = await run(1)
    three = await run(3)
    ratio = one / three
    print(f"12-step /task, ~0.5 s per response: concurrency 1 {one:.1f} s, 3 {three:.1f} s ({ratio:.2f}x)")


if __name__ == "__main__":
    asyncio.run(main())
