"""Per-step agent overhead over ACP against the same over LSP, on the same fake endpoint.

The step overhead is bench_agent's (response end -> next request, a `read` tool): the
edge adds its work to each step (an ACP `tool_call` + `tool_call_update` with the output,
vs. LSP's `coder/event`s and progress). Both servers run in the same run, rounds
alternating (ABBA), so the machine's noise hits both; the figure is the ratio of the
medians (goal: ACP within 10% of LSP).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import msgspec
from bench_agent import TimedFakeServer, _turn, agent_env, agent_workspace, reply, tool_step
from common import Result, coder_server, median, server_env, temp_root


class RawAcpClient:
    """ACP over a child's stdio, raw (one msgspec decode per line), as common.LspClient is for
    LSP: the benchmark process also hosts the fake endpoint, so the client must cost little
    and cost the same on both sides for the ratio to be the edges'."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self._ids = itertools.count(1)
        self._pending: dict[Any, asyncio.Future[Any]] = {}
        self._reader = asyncio.get_running_loop().create_task(self._read_loop())

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        msg_id = next(self._ids)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = fut
        assert self.proc.stdin is not None
        self.proc.stdin.write(_enc.encode({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}) + b"\n")
        return await asyncio.wait_for(fut, 120)

    async def _read_loop(self) -> None:
        assert self.proc.stdout is not None
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError, ValueError):
            while line := await self.proc.stdout.readline():
                msg = _dec.decode(line)
                if "method" not in msg:
                    fut = self._pending.pop(msg.get("id"), None)
                    if fut is not None and not fut.done():
                        fut.set_exception(RuntimeError(msg["error"])) if msg.get("error") else fut.set_result(
                            msg["result"]
                        )
                elif "id" in msg:
                    raise RuntimeError(f"unexpected request from the agent: {msg['method']}")


@contextlib.asynccontextmanager
async def acp_server(root: Any, env: dict[str, str]) -> AsyncIterator[tuple[Callable[[str], Awaitable[None]], int]]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "coder_ls",
        "--acp",
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=str(root),
        env=server_env(root, env),
        limit=64 * 1024 * 1024,
    )
    client = RawAcpClient(proc)
    try:
        await client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        sid = (await client.request("session/new", {"cwd": str(root), "mcpServers": []}))["sessionId"]

        async def turn(text: str) -> None:
            answer = await client.request(
                "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
            )
            if answer["stopReason"] != "end_turn":
                raise RuntimeError(f"ACP turn ended {answer['stopReason']}")

        yield turn, proc.pid
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            proc.kill()
            await proc.wait()


def cpu_ms(pid: int) -> float:
    """CPU time (user + system) the process has used so far, in ms (/proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


async def _gaps(edge: str, steps: int) -> tuple[list[float], float]:
    """The step gaps of one turn of `steps` read steps, and the server's CPU ms per step."""
    fake = TimedFakeServer().start()
    try:
        with temp_root() as tmp:
            root = agent_workspace(tmp)
            if edge == "lsp":
                async with coder_server(root, env=agent_env(fake)) as client:
                    fake.push(tool_step(), reply("ok"))  # warm-up: SDK import, tools, connection
                    await _turn(client, "Read small.txt.")
                    first = len(fake.message_requests)
                    fake.push(*[tool_step() for _ in range(steps)], reply("Read it many times."))
                    cpu0 = cpu_ms(client.pid)
                    await _turn(client, "Read small.txt again and again.")
                    cpu = (cpu_ms(client.pid) - cpu0) / steps
            else:
                async with acp_server(root, agent_env(fake)) as (turn, pid):
                    fake.push(tool_step(), reply("ok"))
                    await turn("Read small.txt.")
                    first = len(fake.message_requests)
                    fake.push(*[tool_step() for _ in range(steps)], reply("Read it many times."))
                    cpu0 = cpu_ms(pid)
                    await turn("Read small.txt again and again.")
                    cpu = (cpu_ms(pid) - cpu0) / steps
            gaps = fake.step_gaps(first, steps)
    finally:
        fake.stop()
    return gaps, cpu


async def bench_acp_step_ratio(quick: bool) -> list[Result]:
    rounds, steps = (2, 8) if quick else (4, 40)  # CPU time comes in 10 ms ticks: 40 steps make 0.25 ms
    lsp: list[float] = []
    acp: list[float] = []
    cpu: dict[str, list[float]] = {"lsp": [], "acp": []}
    for i in range(rounds):
        order = [("lsp", lsp), ("acp", acp)]
        if i % 2:
            order.reverse()  # ABBA: neither edge always goes first
        for edge, out in order:
            gaps, per_step = await _gaps(edge, steps)
            out.extend(gaps)
            cpu[edge].append(per_step)
    ratio = median(acp) / median(lsp)
    cpu_ratio = median(cpu["acp"]) / median(cpu["lsp"])
    return [
        Result(
            "acp_step_ratio",
            "agent overhead per step over ACP / over LSP (same fake, read tool)",
            ratio,
            1.10,
            unit="x",
            samples=acp,
            baseline=lsp,
            notes=[
                f"{rounds} rounds of {steps} steps per edge, alternating; median ACP {median(acp):.2f} ms, "
                f"LSP {median(lsp):.2f} ms"
            ],
        ),
        Result(
            "acp_step_cpu_ratio",
            "server CPU per step over ACP / over LSP (less sensitive to a busy machine than wall time)",
            cpu_ratio,
            1.10,
            unit="x",
            samples=cpu["acp"],
            baseline=cpu["lsp"],
            notes=[
                f"CPU ms per step, median of {rounds} turns: ACP {median(cpu['acp']):.2f}, LSP {median(cpu['lsp']):.2f}"
            ],
        ),
    ]


_enc = msgspec.json.Encoder()
_dec = msgspec.json.Decoder()

BENCHMARKS = {"acp_step_ratio": bench_acp_step_ratio}
