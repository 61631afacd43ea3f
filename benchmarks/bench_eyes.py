"""The editor as the agent's eyes (contract section 23): what the server does with a large
`coder/diagnostics` answer, and what the tools cost in the fixed prompt.

`eyes_diagnostics_5000`: a client's answer of 5,000 diagnostics over 500 files of a real
workspace, as the stream hands it over, through the server's whole path to the model:
`lsp/eyes.parse_diagnostics` (URIs to paths), the read guards on every path
(`agent/eyes/guard.PathGuard`: resolve in the workspace, realpath), sorting, counting and
the capped text (`agent/eyes/show.diagnostics_text`, 50 lines). The baseline in the same
run, alternating, is the same path for 50 diagnostics in 5 files. Goal: ≤ 50 ms of the
process's CPU time (the wall clock, in the notes, swings with the load of a shared machine). The
stream's JSON decoding of the message (stdlib `json`, what any message of 1.6 MB costs
before the server sees it) is timed apart and given in the notes.

`eyes_prompt_tokens`: the fixed prompt (system prompt + tool specs as the API receives
them, chars/4 as `bench_agent.py`'s `fixed_prompt_tokens` counts) with the four tools on
(a client that declared both requests) and off: the growth. Goal: < 300 tokens on, 0 off.

Alone: `python benchmarks/bench_eyes.py [--runs N]`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import Result, median

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _answer(root: Path, files: int, per_file: int) -> bytes:
    out = []
    for f in range(files):
        path = root / "src" / f"mod{f:03d}.py"
        diags = [
            {
                "range": {"start": {"line": i, "character": 4}, "end": {"line": i, "character": 9}},
                "message": f'Type "str" is not assignable to declared type "int" ({f}/{i})\n  more detail',
                "severity": 1 + (i % 3),
                "source": "Pyright",
                "code": "reportAssignmentType",
            }
            for i in range(per_file)
        ]
        out.append({"uri": path.as_uri(), "diagnostics": diags})
    return json.dumps(out).encode()


def _decode(data: bytes) -> Any:
    return json.loads(data, object_hook=lambda d: d)  # as the stream decodes (lsp/stream.py)


def _path(root: Path, raw: Any) -> str:
    from coder_ls.agent.eyes.guard import PathGuard
    from coder_ls.agent.eyes.show import diagnostics_text
    from coder_ls.lsp.eyes import parse_diagnostics
    from coder_ls.protocol.config import Config

    answer = parse_diagnostics(raw)
    return diagnostics_text(answer, PathGuard(root, Config()), under=None, limit=50)


def measure(runs: int) -> tuple[list[float], list[float], list[float], list[float], str]:
    """CPU ms of (5,000: the server's work, 50: the same, 5,000: JSON decoding alone), the
    5,000's wall-clock ms, and the text the model sees."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        (root / "src").mkdir(parents=True)
        for f in range(500):
            (root / "src" / f"mod{f:03d}.py").write_text("x = 1\n" * 10)
        big, small = _answer(root, 500, 10), _answer(root, 5, 10)
        for _ in range(3):  # warm-up: imports, the realpath cache of the OS
            _path(root, _decode(big)), _path(root, _decode(small))
        many: list[float] = []
        few: list[float] = []
        decoding: list[float] = []
        wall: list[float] = []
        for i in range(runs):
            for data, into in ((big, many), (small, few)) if i % 2 == 0 else ((small, few), (big, many)):
                t0 = time.process_time()
                raw = _decode(data)
                t1, w1 = time.process_time(), time.perf_counter()
                text = _path(root, raw)
                into.append((time.process_time() - t1) * 1000)
                if data is big:
                    wall.append((time.perf_counter() - w1) * 1000)
                    decoding.append((t1 - t0) * 1000)
                    shown = text
        return many, few, decoding, wall, shown


def prompt_tokens() -> tuple[float, float]:
    """(fixed prompt tokens off, on) for a fresh workspace's agent."""
    from coder_ls.agent.prompt import system_prompt
    from coder_ls.agent.runner import Agent
    from coder_ls.protocol.config import Config

    def fixed(specs: list[Any]) -> float:
        tools = [{"name": s.name, "description": s.description, "input_schema": s.input_schema} for s in specs]
        return (len(json.dumps(system_prompt(ROOT))) + len(json.dumps(tools))) / 4

    with tempfile.TemporaryDirectory() as tmp:
        agent = Agent(Path(tmp), {})
        config = Config()
        off = fixed(agent.tools_for((), config=config)[1])
        on = fixed(agent.tools_for((), config=config, eyes=(True, True))[1])
    return off, on


async def bench_eyes_diagnostics(quick: bool) -> list[Result]:
    many, few, decoding, wall, shown = measure(6 if quick else 30)
    return [
        Result(
            "eyes_diagnostics_5000",
            "5,000 editor diagnostics (500 files) → the diagnostics tool's text",
            median(many),
            50.0,
            samples=many,
            baseline=few,
            notes=[
                f"baseline (50 diagnostics, 5 files) median {median(few):.2f} ms; "
                f"ratio {median(many) / max(median(few), 1e-9):.1f}×",
                f"CPU time of the process (stable on a shared machine); wall clock median {median(wall):.1f} ms "
                f"at load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs",
                f"not counted: the stream's JSON decoding of the 5,000 ({median(decoding):.1f} ms CPU, "
                "stdlib json, paid by any message of that size)",
                f"what reaches the model: {len(shown)} characters, last line {shown.splitlines()[-1]!r}",
            ],
        )
    ]


async def bench_eyes_prompt(quick: bool) -> list[Result]:
    off, on = prompt_tokens()
    return [
        Result(
            "eyes_prompt_tokens",
            "fixed prompt growth with the editor tools on (off: 0 by construction)",
            on - off,
            300.0,
            unit="tokens",
            notes=[f"fixed prompt {off:.0f} tokens off, {on:.0f} on (chars/4 of the JSON as sent)"],
        )
    ]


BENCHMARKS = {"eyes_diagnostics_5000": bench_eyes_diagnostics, "eyes_prompt_tokens": bench_eyes_prompt}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    many, few, decoding, wall, shown = measure(args.runs)
    off, on = prompt_tokens()
    print(
        f"5,000 diagnostics: median {median(many):.2f} ms CPU (goal ≤ 50), p90 {sorted(many)[int(len(many) * 0.9)]:.2f}"
    )
    print(f"                   wall clock median {median(wall):.2f} ms at load {os.getloadavg()[0]:.1f}")
    print(f"   50 diagnostics: median {median(few):.2f} ms; ratio {median(many) / median(few):.1f}×")
    print(f"   (not counted: the stream's JSON decoding of the 5,000: median {median(decoding):.2f} ms)")
    print(f"fixed prompt: {off:.0f} tokens off, {on:.0f} on: +{on - off:.0f} (goal < 300)")
    print("the model sees:\n" + "\n".join(shown.splitlines()[:4]) + "\n...\n" + shown.splitlines()[-1])


if __name__ == "__main__":
    main()
