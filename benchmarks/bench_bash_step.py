"""The agent's bash step beside its floor, measured in one run on one timed fake endpoint.

    python benchmarks/bench_bash_step.py [--rounds 10] [--steps 20] [--load N] [--json out.json]
        [--before DIR] [--one-session]

Workload: a turn of `steps` consecutive tool calls of the agent's own shell tool, each
running `true`, then a final answer. Per step: the fake server's time when it finished
sending response k (`TimedFakeServer`) -> arrival of request k+1.

- `floor`: a bare `anthropic` SDK loop in a process of its own (`FLOOR`): iterate the raw
  event stream of `messages.create(stream=True)`, join the deltas, run the tool call in one
  persistent plain bash (no sandbox: the least a shell tool can cost), append the result,
  send the next request. Nothing else.
- `coder_ls`: the real server (`python -m coder_ls`, preset `yolo`, the default sandbox).
  Each round starts a new session (`/new`: new shells, an empty conversation), as each
  floor round is a new process; `--one-session` keeps every round in one session instead
  (its conversation grows by 44 messages a round: the step of a long session).

The two alternate round by round (floor, coder_ls, floor, ...), each round one warm-up turn
then the timed one, so load and CPU frequency hit both alike. The fake stamps a request's
arrival when its last byte is read, before it parses the JSON (its own cost, which grows
with the conversation). `--load N` runs N busy-loop
processes during the whole measurement (the figure under CPU load).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import multiprocessing
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    CODER_CMD,
    REPO,
    SMALL_REPO,
    Result,
    byte_compile,
    coder_server,
    init_git,
    median,
    temp_root,
    write_user_config,
)

sys.path.insert(0, str(REPO / "tests" / "fakes"))
from anthropic_server import reply
from bench_agent import TimedFakeServer  # the fake that records when each reply finished

_ids = itertools.count(1)

# The floor: the least an agent loop over the SDK does per step. argv: url, turns, model.
FLOOR = r"""
import json, os, subprocess, sys
import anthropic

client = anthropic.Anthropic(api_key="x", base_url=sys.argv[1], max_retries=0)
TOOLS = [{"name": "bash", "description": "Run a shell command.",
          "input_schema": {"type": "object", "properties": {"command": {"type": "string"}},
                           "required": ["command"]}}]
sh = subprocess.Popen(["bash", "--noprofile", "--norc"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                      stderr=subprocess.STDOUT)

def run(command):
    sh.stdin.write(command.encode() + b" </dev/null\nprintf '\\0%d\\0' $?\n")
    sh.stdin.flush()
    out = b""
    while out.count(b"\0") < 2:
        out += os.read(sh.stdout.fileno(), 65536)
    text, code = out.split(b"\0")[:2]
    return text.decode() + f"[exit code: {code.decode()}]"

messages = []
for turn in range(int(sys.argv[2])):
    messages.append({"role": "user", "content": f"turn {turn}: run true until told to stop"})
    while True:
        blocks, parts = [], {}
        for ev in client.messages.create(model=sys.argv[3], max_tokens=1024, messages=messages, tools=TOOLS,
                                         stream=True):
            if ev.type == "content_block_start":
                blocks.append(ev.content_block.model_dump(exclude_none=True))
                parts[ev.index] = []
            elif ev.type == "content_block_delta":
                d = ev.delta
                parts[ev.index].append(d.text if d.type == "text_delta" else d.partial_json)
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                b["text"] = "".join(parts[i])
            elif b["type"] == "tool_use":
                b["input"] = json.loads("".join(parts[i]) or "{}")
        messages.append({"role": "assistant", "content": [b for b in blocks if b.get("text") != ""]})
        calls = [b for b in blocks if b["type"] == "tool_use"]
        if not calls:
            break
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": c["id"], "content": run(c["input"]["command"])} for c in calls]})
"""
MODEL = "claude-sonnet-5-5"  # the default model (`sonnet`); both sides send it


def bash_step(command: str = "true") -> dict[str, Any]:
    return reply("", toolCalls=[{"id": f"toolu_{next(_ids):05d}", "name": "bash", "input": {"command": command}}])


def script(steps: int) -> list[dict[str, Any]]:
    return [*(bash_step() for _ in range(steps)), reply("done")]


def cpu_ns(pid: int) -> int:
    """The CPU time (ns) all threads of process `pid` have run so far (the scheduler's own
    count, /proc/PID/task/*/schedstat): a server's work per step, which load does not blur."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            total += int((task / "schedstat").read_text().split()[0])
    return total


def _burn() -> None:
    while True:
        pass


@contextlib.contextmanager
def cpu_load(n: int) -> Iterator[None]:
    procs = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(n)]
    for p in procs:
        p.start()
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.join()


async def floor_round(fake: TimedFakeServer, steps: int) -> list[float]:
    """One floor process: a warm-up turn (1 step), then the timed turn."""
    fake.push(*script(1), *script(steps))
    first = len(fake.message_requests) + 2
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", FLOOR, fake.url, "2", MODEL, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, err = await proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"the floor loop failed: {err.decode()[-2000:]}")
    return fake.step_gaps(first, steps)


async def measure(
    rounds: int, steps: int, load: int = 0, before: Path | None = None, one_session: bool = False
) -> dict[str, list[float]]:
    """`before`: a checkout of coder_ls (its parent directory) measured too, as `before`,
    round by round beside the others (a change's effect, in one run). Each round of a
    server starts a new session (`/new`), as each floor round is a new process with an
    empty conversation; `one_session`: every round in the server's first session instead
    (the conversation grows by 2 x (steps + 2) messages a round: a long session's step)."""
    out: dict[str, list[float]] = {"floor": [], "coder_ls": []}
    fake = TimedFakeServer().start()
    try:
        with temp_root() as tmp, cpu_load(load):
            async with contextlib.AsyncExitStack() as stack:
                env = {"ANTHROPIC_API_KEY": "x", "ANTHROPIC_BASE_URL": fake.url}
                clients = {}
                for name, extra in [("coder_ls", {}), *([("before", {"PYTHONPATH": str(before)})] if before else [])]:
                    root = init_git(tmp / f"ws-{name}", dict(SMALL_REPO))
                    write_user_config(root, {"permissions": "yolo", "model": MODEL})
                    clients[name] = await stack.enter_async_context(coder_server(root, env={**env, **extra}))
                    out[name], out[f"{name} cpu"] = [], []
                for n in range(rounds):
                    out["floor"] += await floor_round(fake, steps)
                    for name, client in clients.items():
                        if not one_session and n:
                            await _command(client, "/new")
                        # warm-up turn (the session's shell starts; first round: the client, its connection)
                        fake.push(*script(1))
                        await _turn(client, f"warm {n}")
                        first = len(fake.message_requests)
                        fake.push(*script(steps))
                        cpu0 = cpu_ns(client.proc.pid)
                        await _turn(client, f"run true {steps} times ({n})")
                        out[name] += fake.step_gaps(first, steps)
                        out[f"{name} cpu"].append((cpu_ns(client.proc.pid) - cpu0) / 1e6 / steps)
    finally:
        fake.stop()
    if fake.rejections:
        raise RuntimeError(f"the fake refused requests: {fake.rejections[:1]}")
    return out


async def _command(client: Any, text: str) -> None:
    r = await client.execute("coder.input", {"text": text}, token=f"cmd-{next(_ids)}", timeout=60)
    if r["status"] != "completed":
        raise RuntimeError(f"{text}: {r['status']}: {r.get('error')}")


async def _turn(client: Any, text: str) -> None:
    r = await client.execute("coder.input", {"text": text}, token=f"turn-{next(_ids)}", timeout=120)
    if r["status"] != "completed":
        raise RuntimeError(f"agent turn {r['status']}: {r.get('error')}")


def results(figures: dict[str, list[float]], load: int) -> list[Result]:
    floor, coder = figures["floor"], figures["coder_ls"]
    suffix = f" (load {load})" if load else ""
    ratio = median(coder) / median(floor)
    return [
        Result(
            "bash_step_ratio" + (f"_load{load}" if load else ""),
            "agent bash step (`true`) / bare SDK loop, same run" + suffix,
            ratio,
            1.5,
            unit="x",
            samples=coder,
            baseline=floor,
            notes=[f"coder_ls median {median(coder):.2f} ms, floor median {median(floor):.2f} ms{suffix}"],
        ),
        Result(
            "bash_step",
            "agent bash step (`true`), response end -> next request" + suffix,
            median(coder),
            None,
            samples=coder,
        ),
    ]


async def bench_bash_step(quick: bool) -> list[Result]:
    return results(await measure(2 if quick else 10, 8 if quick else 20), 0)


BENCHMARKS = {"bash_step": bench_bash_step}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--load", type=int, default=0, help="busy-loop processes running meanwhile")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--before", type=Path, help="a directory holding another coder_ls, measured beside (PYTHONPATH)")
    ap.add_argument("--one-session", action="store_true", help="every round in one session (a long session)")
    ap.add_argument("--profile", type=Path, help="run the server under cProfile, its stats written here")
    args = ap.parse_args()
    if args.profile:  # the server's whole life; read the per-step functions (tottime / steps)
        # through sh: the server's stderr kept beside the stats (a crash under the profiler says why)
        run = 'exec "$0" -m cProfile -o "$1" -m coder_ls 2>>"$1.stderr"'
        CODER_CMD[:] = ["sh", "-c", run, sys.executable, str(args.profile)]
    byte_compile(*([args.before / "coder_ls"] if args.before else []))
    byte_compile()
    figures = asyncio.run(measure(args.rounds, args.steps, args.load, args.before, args.one_session))
    for name, values in figures.items():
        s = sorted(values)
        print(f"{name:12s} median {median(values):6.2f} ms  p90 {s[int(len(s) * 0.9) - 1]:6.2f} ms  n={len(values)}")
    for name in [n for n in figures if n != "floor" and not n.endswith(" cpu")]:
        print(f"ratio {name:9s} {median(figures[name]) / median(figures['floor']):.2f}x (goal <= 1.5x)")
    if args.json:
        args.json.write_text(json.dumps({"load": args.load, "cpus": os.cpu_count(), **figures}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
