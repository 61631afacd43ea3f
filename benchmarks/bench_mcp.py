"""MCP: `initialize` with 5 MCP servers configured vs none (the servers start in the
background at the first submission, never on `initialize`'s path), and the overhead of a
tool call through our adapter over the same call made with the SDK alone on the same
connection (schema check, result mapping, redaction: what coder-ls adds to the server's
own time). Run: `.venv/bin/python benchmarks/bench_mcp.py [--quick]`."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from pathlib import Path

from bench_init import time_initialize
from common import CODER_CMD, SMALL_REPO, Result, init_git, median, now, temp_root

TIME_SERVER = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}


def _processes_with(marker: str) -> int:
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    count += 1
            except OSError:
                pass
    return count


async def bench_init_with_servers(quick: bool) -> list[Result]:
    pairs = 3 if quick else 10
    marker = uuid.uuid4().hex
    with temp_root() as tmp:
        bare = init_git(tmp / "bare", SMALL_REPO)
        five = init_git(tmp / "five", SMALL_REPO)
        config = five.parent / f".xdg-{five.name}" / "coder"
        config.mkdir(parents=True)
        servers = {f"s{i}": {**TIME_SERVER, "args": [*TIME_SERVER["args"], f"--marker-{marker}"]} for i in range(5)}
        (config / "config.json").write_text(json.dumps({"mcpServers": servers}))
        with_servers: list[float] = []
        without: list[float] = []
        await time_initialize(CODER_CMD, bare, initialized=True)  # warm the page cache
        for i in range(pairs):
            order = [(five, with_servers), (bare, without)]
            if i % 2:
                order.reverse()
            for root, out in order:
                out.append(await time_initialize(CODER_CMD, root, initialized=True))
        started = _processes_with(marker)
    ratio = median(with_servers) / median(without)
    return [
        Result(
            "mcp_init_ratio",
            "initialize with 5 MCP servers / none",
            ratio,
            1.10,
            unit="x",
            samples=with_servers,
            baseline=without,
            notes=[
                f"median {median(with_servers):.0f} ms vs {median(without):.0f} ms; "
                f"server processes started by initialize: {started}"
            ],
        )
    ]


async def bench_tool_overhead(quick: bool) -> list[Result]:
    import os

    from coder_ls.agent.tools.base import ToolContext
    from coder_ls.agent.tools.mcp import make_mcp_tools
    from coder_ls.mcp.config import parse_servers
    from coder_ls.mcp.connection import McpConnection
    from coder_ls.protocol.config import Config

    n = 30 if quick else 200
    spec = parse_servers({"time": TIME_SERVER}, "user", os.environ, "bench", [])[0]
    conn = McpConnection(spec, dict(os.environ), cwd=Path.cwd())
    assert await conn.wait_ready(), conn.last_error
    tools, _ = make_mcp_tools([(conn, t) for t in conn.tools])
    tool = next(t for t in tools if t.remote == "get_current_time")
    ctx = ToolContext(root=Path.cwd(), config=Config(), host=None)  # type: ignore[arg-type]
    args = {"timezone": "Europe/Paris"}
    session = conn.session()
    sdk: list[float] = []
    ours: list[float] = []
    for _ in range(5):  # warm both paths
        await session.call_tool("get_current_time", args)
        await tool.call(ctx, args)
    for i in range(n):
        order = [("sdk", sdk), ("ours", ours)]
        if i % 2:
            order.reverse()
        for kind, out in order:
            t0 = now()
            if kind == "sdk":
                await session.call_tool("get_current_time", args)
            else:
                output = await tool.call(ctx, args)
                assert not output.is_error, output
            out.append((now() - t0) * 1000)
    await conn.close()
    overhead = median(ours) - median(sdk)
    return [
        Result(
            "mcp_tool_overhead",
            "tool call via coder-ls adapter - SDK alone (stdio, mcp-server-time)",
            overhead,
            5.0,
            samples=ours,
            baseline=sdk,
            notes=[f"median {median(ours):.2f} ms through coder-ls vs {median(sdk):.2f} ms with the SDK alone"],
        )
    ]


async def bench_loop_stall(quick: bool) -> list[Result]:
    """The longest the event loop is blocked while the hub starts 2 servers from cold (a fresh
    interpreter: the SDK not imported yet) until they are ready: what an LSP request waits."""
    code = r"""
import asyncio, json, os, sys, time
from pathlib import Path
from coder_ls.mcp.hub import McpHub
from coder_ls.protocol.config import Config, McpServerConfig
server = json.loads(sys.argv[1])
config = Config(mcp_servers={"a": McpServerConfig(**server), "b": McpServerConfig(**server)})
async def main():
    gaps = []
    stop = False
    async def tick():
        last = time.perf_counter()
        while not stop:
            await asyncio.sleep(0.005)
            t = time.perf_counter(); gaps.append(t - last); last = t
    ticker = asyncio.create_task(tick())
    hub = McpHub(Path.cwd(), dict(os.environ), config=lambda: config, trusted=lambda: False)
    hub.start()
    await hub.wait_started()
    stop = True
    await ticker
    ready = sum(c.state == "ready" for c in hub.connections.values())
    await hub.close()
    print(json.dumps({"max_gap_ms": max(gaps) * 1000, "ready": ready}))
asyncio.run(main())
"""
    import subprocess

    runs = 1 if quick else 3
    gaps: list[float] = []
    for _ in range(runs):
        out = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-c", code, json.dumps(TIME_SERVER)],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )
        data = json.loads(out.stdout.strip().splitlines()[-1])
        assert data["ready"] == 2, out.stderr[-500:]
        gaps.append(data["max_gap_ms"])
    return [
        Result(
            "mcp_loop_stall",
            "longest event-loop stall while 2 MCP servers start (cold SDK)",
            median(gaps),
            200.0,
            samples=gaps,
            notes=["the SDK is imported in a worker thread; what is left is GIL contention with that import"],
        )
    ]


BENCHMARKS = {"mcp_init": bench_init_with_servers, "mcp_tool": bench_tool_overhead, "mcp_stall": bench_loop_stall}


def main() -> None:
    from run import print_table

    quick = "--quick" in sys.argv
    results: list[Result] = []
    for bench in BENCHMARKS.values():
        results += asyncio.run(bench(quick))
    print_table(results)


if __name__ == "__main__":
    main()
