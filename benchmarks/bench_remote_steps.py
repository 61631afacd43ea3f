"""Where a `/task` step runs, and what that costs (contract section 25): a 12-step task
whose steps each run `sleep 2` and write a file, in one run side by side:

- local, `tasks.maxConcurrency` 1 (the baseline step) and 4;
- in a git worktree per step, concurrency 4, when this tree has `tasks.isolation`;
- on Ray: a local cluster (head with no CPUs + one worker node with 4 slots,
  tests/remote/ray_cluster.py), concurrency 1 (Ray's own per-step cost) and 4. Skipped
  with the reason without `ray`.

Figures: the task's wall time (`/task` sent → result), and each step's own time (its
`subagentStarted` → `subagentFinished` as the client sees them) less the 2 s it sleeps:
the per-step overhead, its median beside the local concurrency-1 step's. The fake answers
at once; the model's time is not in these figures. On this 2-CPU machine four steps at once
contend for the CPUs, and Ray's share includes starting a Python worker and `coder-ls exec`
on the node for each step.
Run: `python benchmarks/bench_remote_steps.py`."""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from typing import Any

from common import REPO, SMALL_REPO, LspClient, init_git, server_env, temp_root, write_user_config

sys.path.insert(0, str(REPO / "tests" / "fakes"))
sys.path.insert(0, str(REPO / "tests" / "remote"))
from anthropic_server import FakeAnthropicServer, reply
from ray_cluster import local_cluster, skip_reason

from coder_ls.protocol.config import TasksConfig

CODER_CMD = [sys.executable, "-m", "coder_ls"]
STEPS = 12
SLEEP = 2.0


def script() -> list[dict[str, Any]]:
    steps = [{"id": f"s{i:02d}", "title": f"Step {i}", "prompt": f"work item {i:02d} please"} for i in range(STEPS)]
    out: list[dict[str, Any]] = [
        {**reply("", toolCalls=[{"id": "toolu_p", "name": "plan", "input": {"steps": steps}}]), "when": "Plan how to"},
        {**reply("planned"), "when": "Plan how to"},
    ]
    for i in range(STEPS):
        command = f"sleep {SLEEP:g} && echo {i} > out-{i:02d}.txt"
        call = {"id": f"toolu_{i}", "name": "bash", "input": {"command": command}}
        out.append({**reply("", toolCalls=[call]), "when": f"work item {i:02d} please"})
        out.append({**reply(f"done {i}"), "when": f"work item {i:02d} please"})
    out.append({**reply("# Report"), "when": "Write the final report"})
    return out


async def run(label: str, tasks: dict[str, Any], extra_env: dict[str, str] | None = None) -> dict[str, Any]:
    with FakeAnthropicServer() as fake, temp_root() as tmp:
        root = init_git(tmp / "ws", dict(SMALL_REPO))
        executor = tasks.get("executor")
        if isinstance(executor, dict):  # the workers reach the fake too; the key from the nodes' environment
            executor["runtimeEnv"] = {"env_vars": {"ANTHROPIC_API_KEY": "${BENCH_NODE_KEY}",
                                                   "ANTHROPIC_BASE_URL": fake.url}}  # fmt: skip
        write_user_config(root, {"permissions": "yolo", "tasks": tasks})
        env = {"ANTHROPIC_API_KEY": "x", "ANTHROPIC_BASE_URL": fake.url, **(extra_env or {})}
        client = await LspClient.spawn(CODER_CMD, cwd=root, env=server_env(root, env))
        seen: dict[str, float] = {}
        spans: dict[str, float] = {}

        def on_event(method: str, params: Any) -> None:
            if method != "coder/event" or not isinstance(params, dict):
                return
            kind, agent = params.get("type"), params.get("agentId")
            if kind == "subagentStarted" and str(params.get("prompt", "")).startswith("Step "):
                seen[agent] = time.monotonic()
            elif kind == "subagentFinished" and agent in seen:
                spans[agent] = time.monotonic() - seen[agent]

        client.notification_handlers.append(on_event)
        try:
            await client.initialize(root)
            fake.push(*script())
            t = time.monotonic()
            r = await client.execute("coder.input", {"text": "/task twelve sleeps"}, token="t", timeout=600)
            wall = time.monotonic() - t
            if r["status"] != "completed":
                raise RuntimeError(f"{label}: /task {r['status']}: {r.get('reply')}")
            written = sorted(p.name for p in root.glob("out-*.txt"))
            if len(written) != STEPS:
                raise RuntimeError(f"{label}: {len(written)} of {STEPS} files landed")
            wheres = sorted({s.get("where", "?") for s in r["data"]["steps"]})
            overhead = statistics.median(spans.values()) - SLEEP if spans else float("nan")
            return {"label": label, "wall": wall, "overhead": overhead, "where": wheres, "steps": len(spans)}
        finally:
            await client.close()


async def main() -> None:
    rows = [await run("local, concurrency 1", {"maxConcurrency": 1})]
    rows.append(await run("local, concurrency 4", {"maxConcurrency": 4}))
    if "isolation" in TasksConfig.__struct_fields__:
        rows.append(await run("worktrees, concurrency 4", {"maxConcurrency": 4, "isolation": "worktree"}))
    else:
        print("worktrees: skipped (this tree has no tasks.isolation)")
    reason = skip_reason()
    if reason:
        print(f"ray: skipped ({reason})")
    else:
        node_env = {"PYTHONPATH": str(REPO), "BENCH_NODE_KEY": "x"}
        started = time.monotonic()
        with local_cluster(4, node_env) as cluster:
            up = time.monotonic() - started
            for slots in (1, 4):
                executor = {"kind": "ray", "address": cluster.address, "permissions": "yolo"}
                tasks = {"maxConcurrency": slots, "executor": executor}
                rows.append(await run(f"ray, concurrency {slots} (4 slots)", tasks, cluster.driver_env))
        print(f"(the local Ray cluster took {up:.1f} s to start; not in the figures)")
    base = rows[0]["overhead"]
    print(f"{STEPS}-step /task, each step `sleep {SLEEP:g}` + a file; {os.cpu_count()} CPUs")
    print(f"{'':28} {'wall':>8} {'vs c=1':>7} {'step overhead':>14} {'vs local step':>14}  where")
    for row in rows:
        print(f"{row['label']:28} {row['wall']:7.1f}s {rows[0]['wall'] / row['wall']:6.2f}x "
              f"{row['overhead']:13.2f}s {row['overhead'] - base:+13.2f}s  {', '.join(row['where'])[:40]}")  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
