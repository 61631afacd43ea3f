"""The first turn of a session, with the provider warm-up on and off, side by side.

Each run: a fresh server (`ANTHROPIC_API_KEY=x`, `ANTHROPIC_BASE_URL` at the fake
endpoint of tests/fakes on 127.0.0.1, preset `yolo`), `initialize` + `initialized`,
`coder.shell {command: "true"}` sent while the warm-up would be importing the SDK
(0.8 s after `initialized`), then idle until 3 s after `initialized`,
the RSS read, then `coder.input` — timed until the fake server has the first
`/v1/messages` request. Runs alternate warm (default) and cold (`CODER_WARMUP=0`, the
behaviour before the warm-up existed).

`first_turn_at_once`: the prompt sent right after `initialized` (as ACP clients and
scripts do), timed the same way; baseline: the same with the warm-up off.

The warm runs then do one more turn (a `read` of a 20-line file) to size the tool
output and the fixed prompt as the model receives them.
"""

from __future__ import annotations

import argparse
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
    LspClient,
    Result,
    byte_compile,
    init_git,
    median,
    rss_mb,
    server_env,
    temp_root,
    write_user_config,
)

sys.path.insert(0, str(REPO / "tests" / "fakes"))
from anthropic_server import FakeAnthropicServer, reply

CODER_CMD = [sys.executable, "-m", "coder_ls"]
IDLE = 3.0  # seconds between `initialized` and the first turn
SHELL_AT = 0.8  # seconds after `initialized`: the warm-up (client, models listing) has run or is running

_ids = itertools.count(1)
TWENTY_LINES = "".join(f"line {i}: the quick brown fox jumps over\n" for i in range(1, 21))


def _workspace(tmp: Path) -> Path:
    files = dict(SMALL_REPO)
    files["twenty.txt"] = TWENTY_LINES
    root = init_git(tmp / f"ws{next(_ids)}", files)
    write_user_config(root, {"permissions": "yolo"})
    return root


async def _turn(client: LspClient, text: str) -> dict[str, Any]:
    r: dict[str, Any] = await client.execute("coder.input", {"text": text}, token=f"turn-{next(_ids)}", timeout=120)
    if r["status"] != "completed":
        raise RuntimeError(f"agent turn {r['status']}: {r.get('error')}")
    return r


async def _wait_request(fake: FakeAnthropicServer, n: int, timeout: float = 60) -> float:
    deadline = time.monotonic() + timeout
    while len(fake.message_requests) < n:
        if time.monotonic() > deadline:
            raise RuntimeError("no model request arrived")
        await asyncio.sleep(0.001)
    return fake.message_requests[n - 1].time


async def _one_run(tmp: Path, fake: FakeAnthropicServer, warm: bool) -> dict[str, Any]:
    root = _workspace(tmp)
    env = {"ANTHROPIC_API_KEY": "x", "ANTHROPIC_BASE_URL": fake.url}
    if not warm:
        env["CODER_WARMUP"] = "0"
    client = await LspClient.spawn(CODER_CMD, cwd=root, env=server_env(root, env))
    out: dict[str, Any] = {}
    try:
        await client.initialize(root)
        t_init = time.monotonic()
        await asyncio.sleep(SHELL_AT)
        t = time.monotonic()
        r = await client.execute("coder.shell", {"command": "true"}, token=f"sh-{next(_ids)}")
        out["shell_ms"] = (time.monotonic() - t) * 1000
        if r["status"] != "completed":
            raise RuntimeError(f"!true: {r['status']}")
        await asyncio.sleep(max(0.0, IDLE - (time.monotonic() - t_init)))
        out["rss_mb"] = rss_mb(client.pid)
        before = len(fake.message_requests)
        fake.push(reply("Hello."))
        t = time.monotonic()
        turn = asyncio.ensure_future(_turn(client, "Say hello."))
        arrived = await _wait_request(fake, before + 1)
        out["first_ms"] = (arrived - t) * 1000
        await turn
        out["first_body"] = fake.message_requests[before].body
        if warm:
            call = {"id": f"toolu_{next(_ids):05d}", "name": "read", "input": {"path": "twenty.txt"}}
            fake.push(reply("", toolCalls=[call]), reply("Read it."))
            await _turn(client, "Read twenty.txt.")
            body = fake.message_requests[-1].body
            results = [
                b
                for m in body["messages"]
                for b in (m["content"] if isinstance(m["content"], list) else [])
                if b.get("type") == "tool_result"
            ]
            content = results[-1]["content"]
            out["read_chars"] = len(content if isinstance(content, str) else json.dumps(content))
    finally:
        await client.close()
    return out


async def _at_once_run(tmp: Path, fake: FakeAnthropicServer, warm: bool, extra: dict[str, str] | None = None) -> float:
    """`coder.input` sent right after `initialized`: ms until the first model request."""
    root = _workspace(tmp)
    env = {"ANTHROPIC_API_KEY": "x", "ANTHROPIC_BASE_URL": fake.url, **(extra or {})}
    if not warm:
        env["CODER_WARMUP"] = "0"
    client = await LspClient.spawn(CODER_CMD, cwd=root, env=server_env(root, env))
    try:
        await client.initialize(root)
        before = len(fake.message_requests)
        fake.push(reply("Hello."))
        t = time.monotonic()
        turn = asyncio.ensure_future(_turn(client, "Say hello."))
        arrived = await _wait_request(fake, before + 1)
        await turn
        return (arrived - t) * 1000
    finally:
        await client.close()


def _fixed_prompt_chars(body: dict[str, Any]) -> int:
    return len(json.dumps(body.get("system"))) + len(json.dumps(body.get("tools")))


async def bench_first_turn(quick: bool) -> list[Result]:
    pairs = 1 if quick else 4
    runs: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
    at_once: dict[bool, list[float]] = {True: [], False: []}
    fake = FakeAnthropicServer().start()
    try:
        with temp_root() as tmp:
            for i in range(pairs):
                for warm in (True, False) if i % 2 == 0 else (False, True):
                    runs[warm].append(await _one_run(tmp, fake, warm))
                    at_once[warm].append(await _at_once_run(tmp, fake, warm))
    finally:
        fake.stop()
    warm_first = [r["first_ms"] for r in runs[True]]
    cold_first = [r["first_ms"] for r in runs[False]]
    warm_rss = [r["rss_mb"] for r in runs[True] if r["rss_mb"] is not None]
    cold_rss = [r["rss_mb"] for r in runs[False] if r["rss_mb"] is not None]
    warm_sh = [r["shell_ms"] for r in runs[True]]
    cold_sh = [r["shell_ms"] for r in runs[False]]
    body = runs[True][0]["first_body"]
    fixed = _fixed_prompt_chars(body)
    read_chars = [r["read_chars"] for r in runs[True]]
    shape = {k: body.get(k) for k in ("model", "max_tokens", "thinking", "output_config")}
    return [
        Result(
            "first_turn",
            f"coder.input -> first model request, {IDLE:.0f} s after initialized (warm-up on)",
            median(warm_first),
            500.0,
            samples=warm_first,
            baseline=cold_first,
            notes=[
                f"warm-up off (CODER_WARMUP=0, the old behaviour): median {median(cold_first):.0f} ms",
                f"first request: {json.dumps(shape)}",
            ],
        ),
        Result(
            "first_turn_at_once",
            "coder.input sent right after initialized -> first model request (warm-up on)",
            median(at_once[True]),
            300.0,
            samples=at_once[True],
            baseline=at_once[False],
            notes=[f"warm-up off: median {median(at_once[False]):.0f} ms (the turn builds the client itself)"],
        ),
        Result(
            "first_turn_idle_rss",
            f"RSS {IDLE:.0f} s after initialized, before the first turn, warm-up off",
            median(cold_rss) if cold_rss else None,
            60.0,
            unit="MB",
            samples=cold_rss,
            notes=[f"warm-up on (client built, models listed): median {median(warm_rss):.1f} MB"] if warm_rss else [],
        ),
        Result(
            "first_turn_shell",
            f"!true {SHELL_AT} s after initialized, after or during the warm-up",
            median(warm_sh),
            None,
            samples=warm_sh,
            baseline=cold_sh,
            notes=[f"warm-up off: median {median(cold_sh):.1f} ms (the first !cmd of a server)"],
        ),
        Result(
            "read_20_lines",
            "characters of a `read` tool result for a 20-line file",
            median(read_chars),
            None,
            unit="chars",
            samples=read_chars,
        ),
        Result(
            "fixed_prompt_chars",
            "system + tools of the first request (JSON characters; tokens ~ /4)",
            float(fixed),
            None,
            unit="chars",
            notes=[f"~{fixed / 4:.0f} tokens"],
        ),
    ]


async def at_once_beside(before: Path, rounds: int) -> dict[str, list[float]]:
    """The first prompt at once, this checkout against the coder_ls in `before` (its
    parent folder, via `PYTHONPATH`), in alternating order, both byte-compiled."""
    out: dict[str, list[float]] = {"now": [], "before": []}
    runs = [("now", {}), ("before", {"PYTHONPATH": str(before)})]
    fake = FakeAnthropicServer().start()
    try:
        with temp_root() as tmp:
            for i in range(rounds):
                for name, extra in runs if i % 2 == 0 else runs[::-1]:
                    out[name].append(await _at_once_run(tmp, fake, True, extra))
    finally:
        fake.stop()
    return out


BENCHMARKS = {"first_turn": bench_first_turn}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--before", type=Path, help="only the prompt at once, beside the coder_ls in this folder")
    ap.add_argument("--rounds", type=int, default=8, help="with --before: runs of each")
    args = ap.parse_args()
    byte_compile(*([args.before / "coder_ls"] if args.before else []))
    byte_compile()
    if args.before:
        figures = asyncio.run(at_once_beside(args.before, args.rounds))
        for name, values in figures.items():
            print(f"{name:7s} at once: median {median(values):5.0f} ms  {[round(v) for v in values]}")
        return
    for row in asyncio.run(bench_first_turn(args.quick)):
        print(f"{row.name:22} {row.value!s:>10} {row.unit:5} goal {row.goal} {row.verdict()}")
        if row.baseline:
            print(f"{'':22} baseline median {median(row.baseline):.1f}")
        for note in row.notes:
            print(f"{'':22} {note}")


if __name__ == "__main__":
    main()
