"""The bash step of coder_ls beside its floor and its peers, in one run on one timed fake.

    python benchmarks/peers_bash_step.py [--rounds 3] [--steps 20] [--load N] [--npm-dir DIR]

The workload of `bench_bash_step.py` (consecutive calls of the agent's own shell tool, each
running `true`, then a final answer; per step: the fake finished reply k -> it received
request k+1), run on:

- `floor`: the bare `anthropic` SDK loop of `bench_bash_step.FLOOR`;
- `coder_ls`: the real server (`python -m coder_ls`, preset `yolo`, default sandbox);
- `pi`: the pi coding agent (`@mariozechner/pi-coding-agent`, `pi -p`), its `bash` tool;
- `claude`: Claude Code (`@anthropic-ai/claude-code`, `claude -p`), its `Bash` tool.

The peers are installed with `npm install` into `--npm-dir` (a temporary directory by
default) and pointed at the fake (pi: a `models.json` overriding the `anthropic` provider's
`baseUrl`; Claude Code: `ANTHROPIC_BASE_URL`). A peer that cannot be installed or run is
skipped with the reason printed. The fake answers by what each request is: a streamed
request offering the shell tool is a step of the loop (a tool call, or the final answer
after `steps`), anything else (titles, quota checks) a short text, not timed. The four
alternate round by round.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fakes"))

from anthropic_server import reply
from bench_bash_step import FLOOR, MODEL, TimedFakeServer, cpu_load
from common import SMALL_REPO, coder_server, init_git, median, temp_root, write_user_config

PACKAGES = {"pi": "@mariozechner/pi-coding-agent", "claude": "@anthropic-ai/claude-code"}
SHELL_TOOLS = ("bash", "Bash")


class StepFake(TimedFakeServer):
    """Answers each loop request itself: `remaining` tool calls, then the final answer."""

    def __init__(self) -> None:
        super().__init__(strict=False)
        self.remaining = 0
        self.loop: list[tuple[float, float]] = []  # (arrival, finished) of each loop request
        self._n = 0

    def expect(self, steps: int) -> None:
        self.remaining, self.loop = steps, []

    async def _answer(self, spec: dict[str, Any], body: dict[str, Any], reader: Any, writer: Any) -> bool:
        arrived = time.monotonic()
        names = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
        tool = next((n for n in SHELL_TOOLS if n in names), None)
        if tool is None or not body.get("stream"):
            return await super()._answer(reply("ok"), body, reader, writer)
        if self.remaining > 0:
            self.remaining -= 1
            self._n += 1
            call = {"id": f"toolu_peer{self._n:06d}", "name": tool, "input": {"command": "true"}}
            spec = reply("", toolCalls=[call])
        else:
            spec = reply("done")
        ok = await super()._answer(spec, body, reader, writer)
        self.loop.append((arrived, time.monotonic()))
        return ok

    def gaps(self) -> list[float]:
        return [(self.loop[i + 1][0] - self.loop[i][1]) * 1000 for i in range(len(self.loop) - 1)]


def install(npm_dir: Path) -> dict[str, list[str] | str]:
    """name -> argv prefix of the installed CLI, or the reason it is unavailable."""
    out: dict[str, list[str] | str] = {}
    npm = shutil.which("npm")
    if npm is None:
        return dict.fromkeys(PACKAGES, "npm is not installed")
    for name, package in PACKAGES.items():
        exe = npm_dir / "node_modules" / ".bin" / name
        if not exe.exists():
            done = subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--prefix", str(npm_dir), package],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=600,
            )
            if done.returncode != 0 or not exe.exists():
                out[name] = f"npm install {package} failed: {(done.stderr or done.stdout).strip()[-300:]}"
                continue
        out[name] = [str(exe)]
    return out


def peer_command(name: str, exe: list[str], home: Path, fake: StepFake) -> tuple[list[str], dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(HOME=str(home), ANTHROPIC_API_KEY="x", ANTHROPIC_BASE_URL=fake.url)
    prompt = "Run the command true with your shell tool until told otherwise."
    if name == "pi":
        agent_dir = home / ".pi" / "agent"
        agent_dir.mkdir(parents=True, exist_ok=True)
        (agent_dir / "models.json").write_text(json.dumps({"providers": {"anthropic": {"baseUrl": fake.url}}}))
        env["PI_CODING_AGENT_DIR"] = str(agent_dir)
        argv = [*exe, "-p", "--no-session", "--provider", "anthropic", "--model", MODEL, "--tools", "bash", prompt]
        return argv, env
    env.update(DISABLE_TELEMETRY="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1")
    argv = [*exe, "-p", "--model", MODEL, "--allowedTools", "Bash", "--output-format", "text", prompt]
    return argv, env


async def run_process(argv: list[str], env: dict[str, str] | None, cwd: Path, timeout: float = 300) -> str | None:
    """None when it exited 0, else why not."""
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return f"timed out after {timeout:g} s"
    return None if proc.returncode == 0 else f"exit {proc.returncode}: {out.decode(errors='replace')[-400:]}"


async def one(fake: StepFake, steps: int, label: str, run: Any) -> list[float] | str:
    fake.expect(steps)
    why = await run()
    if why is not None:
        return why
    gaps = fake.gaps()
    if len(gaps) != steps:
        return f"{label}: expected {steps} steps, saw {len(gaps)} (its loop did not follow the script)"
    return gaps


async def measure(rounds: int, steps: int, npm_dir: Path, load: int) -> tuple[dict[str, list[float]], dict[str, str]]:
    fake = StepFake().start()
    figures: dict[str, list[float]] = {"floor": [], "coder_ls": []}
    skipped: dict[str, str] = {}
    peers = install(npm_dir)
    for name, value in peers.items():
        if isinstance(value, str):
            skipped[name] = value
    try:
        with temp_root() as tmp, cpu_load(load):
            root = init_git(tmp / "ws", dict(SMALL_REPO))
            write_user_config(root, {"permissions": "yolo"})
            env = {"ANTHROPIC_API_KEY": "x", "ANTHROPIC_BASE_URL": fake.url}
            async with coder_server(root, env=env) as client:

                async def coder_turn() -> str | None:
                    r = await client.execute("coder.input", {"text": "run true"}, token=f"t{time.monotonic_ns()}")
                    return None if r["status"] == "completed" else f"turn {r['status']}: {r.get('error')}"

                floor_argv = [sys.executable, "-c", FLOOR, fake.url, "1", MODEL]
                await one(fake, 1, "coder_ls", coder_turn)  # warm-up
                for _ in range(rounds):
                    runs: dict[str, Any] = {
                        "floor": lambda: run_process(floor_argv, None, root),
                        "coder_ls": coder_turn,
                    }
                    for name, exe in peers.items():
                        if name not in skipped and isinstance(exe, list):
                            home = tmp / f"home-{name}"
                            home.mkdir(exist_ok=True)
                            argv, penv = peer_command(name, exe, home, fake)
                            runs[name] = lambda argv=argv, penv=penv: run_process(argv, penv, root)
                    for name, run in runs.items():
                        got = await one(fake, steps, name, run)
                        if isinstance(got, str):
                            skipped[name] = got
                        else:
                            figures.setdefault(name, []).extend(got)
    finally:
        fake.stop()
    return figures, skipped


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--load", type=int, default=0, help="busy-loop processes running meanwhile")
    ap.add_argument("--npm-dir", type=Path, help="where to npm-install the peers (default: a temporary dir)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    npm_dir = args.npm_dir or Path(tempfile.mkdtemp(prefix="coder-peers-"))
    npm_dir.mkdir(parents=True, exist_ok=True)
    figures, skipped = asyncio.run(measure(args.rounds, args.steps, npm_dir, args.load))
    floor = median(figures["floor"]) if figures.get("floor") else None
    print(f"bash step, {args.steps} steps x {args.rounds} rounds, load {args.load}, {os.cpu_count()} CPUs")
    for name, values in figures.items():
        if name in skipped or not values:
            continue
        ratio = f"{median(values) / floor:.1f}x" if floor else "-"
        print(f"  {name:9s} median {median(values):7.2f} ms  ({ratio} the floor)  n={len(values)}")
    for name, why in skipped.items():
        print(f"  {name:9s} skipped: {why}")
    if args.json:
        args.json.write_text(json.dumps({"load": args.load, "figures": figures, "skipped": skipped}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
