"""The agent loop against a zero-latency scripted Anthropic endpoint (tests/fakes).

- step overhead: from the moment the fake server finished sending a response to the
  arrival of the next request (the harness: parse the stream, run a `read`, log, build
  and send the next request);
- prompt cache: the share of each request's input before its last cache breakpoint;
- the fixed prompt (system + tools) size;
- cancel mid-stream.

Token approximation everywhere: len(JSON text) / 4 (no tokenizer, no network).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any

from common import (
    REPO,
    SMALL_REPO,
    EventWaiter,
    Result,
    coder_server,
    init_git,
    median,
    now,
    temp_root,
    write_user_config,
)

sys.path.insert(0, str(REPO / "tests" / "fakes"))
from anthropic_server import FakeAnthropicServer, hang, reply


class TimedFakeServer(FakeAnthropicServer):
    """The fake server, also recording when it finished sending each streamed response
    (time.monotonic(), after the last chunk was drained to the socket)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.finished: list[float] = []

    async def _stream(self, spec: dict[str, Any], model: str, reader: Any, writer: Any) -> bool:
        ok = await super()._stream(spec, model, reader, writer)
        self.finished.append(time.monotonic())
        return ok

    def step_gaps(self, first: int, steps: int) -> list[float]:
        """The step gaps (ms: reply k finished -> request k+1 received) of the timed turn
        whose first request is `first`, which made `steps` tool steps."""
        reqs = self.message_requests[first:]
        if len(reqs) != steps + 1:
            raise RuntimeError(f"expected {steps + 1} requests, got {len(reqs)}")
        fins = self.finished[first:]
        return [(reqs[i + 1].time - fins[i]) * 1000 for i in range(steps)]


_ids = itertools.count(1)


def tool_step(path: str = "small.txt") -> dict[str, Any]:
    return reply("", toolCalls=[{"id": f"toolu_{next(_ids):05d}", "name": "read", "input": {"path": path}}])


def agent_workspace(tmp: Path) -> Path:
    files = dict(SMALL_REPO)
    files["small.txt"] = "".join(f"line {i}: the quick brown fox\n" for i in range(20))
    root = init_git(tmp / "ws", files)
    write_user_config(root, {"permissions": "yolo"})
    return root


def agent_env(fake: FakeAnthropicServer) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "x", "ANTHROPIC_BASE_URL": fake.url}


async def _turn(client: Any, text: str, timeout: float = 120) -> dict[str, Any]:
    r = await client.execute("coder.input", {"text": text}, token=f"turn-{next(_ids)}", timeout=timeout)
    if r["status"] != "completed":
        raise RuntimeError(f"agent turn {r['status']}: {r.get('error')}")
    return r


async def bench_step_overhead(quick: bool) -> list[Result]:
    steps = 8 if quick else 20
    fake = TimedFakeServer().start()
    try:
        with temp_root() as tmp:
            root = agent_workspace(tmp)
            async with coder_server(root, env=agent_env(fake)) as client:
                # warm-up turn: imports the SDK, builds the tools, opens the HTTP connection
                fake.push(tool_step(), reply("ok"))
                await _turn(client, "Read small.txt.")
                first = len(fake.message_requests)
                fake.push(*[tool_step() for _ in range(steps)], reply("Read it many times."))
                await _turn(client, "Read small.txt again and again.")
                gaps = fake.step_gaps(first, steps)
    finally:
        fake.stop()
    return [
        Result(
            "agent_step",
            "agent overhead per step (response end -> next request, read tool)",
            median(gaps),
            15.0,
            samples=gaps,
            notes=[f"{steps} read steps in one turn after a warm-up turn; yolo preset"],
        )
    ]


# ------------------------------------------------------------------ prompt cache


def _units(body: dict[str, Any]) -> list[tuple[int, bool, str]]:
    """The request as units in the API's cache order: each tool, each system block, each
    message content block (the message's role overhead counted with its first block).
    A unit is (chars of its JSON, carries cache_control, identity key without cache_control)."""
    out: list[tuple[int, bool, str]] = []

    def key(*parts: Any) -> str:
        return json.dumps(parts, sort_keys=True)

    def bare(d: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in d.items() if k != "cache_control"}

    for tool in body.get("tools") or []:
        out.append((len(json.dumps(tool)), "cache_control" in tool, key("tool", bare(tool))))
    system = body.get("system")
    if isinstance(system, str):
        out.append((len(json.dumps(system)), False, key("system", system)))
    elif isinstance(system, list):
        for block in system:
            out.append((len(json.dumps(block)), "cache_control" in block, key("system", bare(block))))
    for m, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        role = message.get("role")
        overhead = len(json.dumps({"role": role, "content": []}))
        if isinstance(content, str):
            out.append((overhead + len(json.dumps(content)), False, key("msg", m, role, content)))
            continue
        for n, block in enumerate(content or []):
            out.append(
                (
                    (overhead if n == 0 else 0) + len(json.dumps(block)),
                    "cache_control" in block,
                    key("msg", m, role, n, bare(block)),
                )
            )
    return out


def cache_share(body: dict[str, Any]) -> tuple[float, float]:
    """(tokens up to and including the last cache breakpoint, all tokens), chars/4."""
    units = _units(body)
    total = sum(u[0] for u in units)
    last = max((i for i, u in enumerate(units) if u[1]), default=-1)
    before = sum(u[0] for u in units[: last + 1])
    return before / 4, total / 4


def cache_reuse(bodies: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """Per request: (tokens a prompt cache could serve, all tokens), chars/4.

    A prefix is served when an earlier request put a breakpoint at the end of an identical
    prefix (tools, system, messages compared block by block without the cache_control
    markers) and the prefix ends at or before this request's last breakpoint. The API's
    20-block lookback and the 5-minute TTL are ignored (the requests are milliseconds apart).
    """
    cached: set[int] = set()
    out: list[tuple[float, float]] = []
    for body in bodies:
        units = _units(body)
        keys: list[int] = []
        running: tuple[str, ...] = ()
        for u in units:
            running = (*running, u[2])
            keys.append(hash(running))
        last = max((i for i, u in enumerate(units) if u[1]), default=-1)
        hit = max((k for k in range(last + 1) if keys[k] in cached), default=-1)
        out.append((sum(u[0] for u in units[: hit + 1]) / 4, sum(u[0] for u in units) / 4))
        cached.update(keys[i] for i, u in enumerate(units) if u[1])
    return out


def fixed_prompt_tokens(body: dict[str, Any]) -> tuple[float, float, float]:
    """(system, tools, total) of the fixed part, chars/4 of the JSON the API receives."""
    system = len(json.dumps(body.get("system") or "")) / 4
    tools = len(json.dumps(body.get("tools") or [])) / 4
    return system, tools, system + tools


async def bench_prompt(quick: bool) -> list[Result]:
    turns = 4 if quick else 10
    fake = TimedFakeServer().start()
    try:
        with temp_root() as tmp:
            root = agent_workspace(tmp)
            async with coder_server(root, env=agent_env(fake)) as client:
                for t in range(turns):
                    path = ["small.txt", "src/app.py", "src/util.py", "README.md"][t % 4]
                    fake.push(tool_step(path), reply(f"Here is what {path} does: it is turn {t}."))
                    await _turn(client, f"Turn {t}: what does {path} do?")
                bodies = [r.body for r in fake.message_requests]
    finally:
        fake.stop()
    shares = [cache_share(b) for b in bodies]
    before = sum(s[0] for s in shares)
    total = sum(s[1] for s in shares)
    per_request = [b / t for b, t in shares]
    system, tools, fixed = fixed_prompt_tokens(bodies[0])
    reuse = cache_reuse(bodies)
    served = sum(r[0] for r in reuse)
    reuse_later = [r[0] / r[1] for r in reuse[1:]]
    return [
        Result(
            "cache_share",
            f"input before the last cache breakpoint ({turns} turns)",
            before / total,
            0.9,
            op=">=",
            unit="share",
            notes=[
                f"{len(bodies)} requests, {total:.0f} input tokens (chars/4 of each block's JSON), "
                f"{before:.0f} before the last breakpoint; per request min {min(per_request):.3f}, "
                f"median {median(per_request):.3f}",
            ],
        ),
        Result(
            "cache_reuse",
            "input a cache could serve (identical earlier prefix)",
            served / total,
            None,
            unit="share",
            notes=[
                f"{served:.0f} of {total:.0f} tokens match a prefix an earlier request cached "
                f"(the first request is all cache writes); per request after the first: min "
                f"{min(reuse_later):.3f}, median {median(reuse_later):.3f}",
            ],
        ),
        Result(
            "fixed_prompt",
            "fixed prompt (system + tools)",
            fixed,
            3000,
            unit="tok",
            notes=[
                f"system {system:.0f} + tools {tools:.0f} (len(JSON)/4 of the recorded request; "
                f"{len(bodies[0].get('tools') or [])} tools)"
            ],
        ),
    ]


async def bench_cancel_stream(quick: bool) -> list[Result]:
    runs = 3 if quick else 15
    samples: list[float] = []
    disconnects: list[float] = []
    fake = TimedFakeServer().start()
    try:
        with temp_root() as tmp:
            root = agent_workspace(tmp)
            async with coder_server(root, env=agent_env(fake)) as client:
                events = EventWaiter(client)
                fake.push(reply("warm"))
                await _turn(client, "Say something.")  # imports the SDK
                for i in range(runs + 1):
                    fake.push(hang(after_events=4))  # message_start, ping, block start, one delta
                    token = f"stream-{next(_ids)}"
                    delta = events.expect(lambda e: e.get("type") == "assistantDelta")
                    _, fut = client.execute_future("coder.input", {"text": f"Talk {i}."}, token=token)
                    await asyncio.wait_for(delta, 30)
                    seen = len(fake.disconnects)
                    t0 = now()
                    t0_mono = time.monotonic()
                    client.notify("window/workDoneProgress/cancel", {"token": token})
                    r = await asyncio.wait_for(fut, 30)
                    dt = (now() - t0) * 1000
                    if r["status"] != "cancelled":
                        raise RuntimeError(f"cancel mid-stream: {r['status']}")
                    for _ in range(200):
                        if len(fake.disconnects) > seen:
                            break
                        await asyncio.sleep(0.005)
                    if i == 0:
                        continue
                    samples.append(dt)
                    if len(fake.disconnects) > seen:
                        disconnects.append((fake.disconnects[seen] - t0_mono) * 1000)
    finally:
        fake.stop()
    notes = ["cancel = window/workDoneProgress/cancel when the first assistantDelta event arrives"]
    if disconnects:
        notes.append(
            f"the fake server saw the stream closed after median {median(disconnects):.1f} ms "
            f"({len(disconnects)}/{len(samples)} runs)"
        )
    else:
        notes.append("the fake server never saw the stream closed")
    return [
        Result("cancel_stream", "cancel mid-stream -> answered", median(samples), 100.0, samples=samples, notes=notes)
    ]


BENCHMARKS = {
    "agent_step": bench_step_overhead,
    "prompt": bench_prompt,
    "cancel_stream": bench_cancel_stream,
}
