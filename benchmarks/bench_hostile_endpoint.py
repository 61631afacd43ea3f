"""The Messages client against a hostile or broken endpoint: CPU, peak RSS and outcome.

    python benchmarks/bench_hostile_endpoint.py [--before DIR] [--cases a,b] [--limit 130] [--json out.json]

Each case is one streamed request (`AnthropicProvider.stream`, one attempt) from a
process of its own (its peak RSS and CPU are its own; `os.wait4`) to a loopback endpoint
in this process (tests/fakes/raw_endpoint.py) that sends exact bytes, 1 MB at a time:

- `no_blank_64mb`: 64 MB of `data:` lines and never a blank line (an event that never ends);
- `event_line_300mb`: one 300 MB `data:` line, then the blank line;
- `gzip_bomb_600mb`: `content-encoding: gzip`, 600 MB of zeros compressed to ~0.6 MB;
- `ping_bomb_600mb`: the same, but 600 MB of valid `ping` events (a stream without end);
- `error_body_300mb`: a 500 whose body is 300 MB.

The client is killed after `--limit` seconds (the outcome then says `killed`).
`--before DIR` runs each case also with the coder_ls in DIR (PYTHONPATH), beside.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO / "tests" / "fakes"))

from raw_endpoint import RawEndpoint, RawRequest, http_head  # noqa: E402

MB = 1 << 20

CHILD = r"""
import asyncio, json, sys, time
from coder_ls.llm.anthropic_provider import AnthropicProvider
from coder_ls.llm.base import ProviderRequest
from coder_ls.protocol.messages import Message, TextBlock

async def main():
    provider = AnthropicProvider(api_key="k", base_url=sys.argv[1], max_attempts=1, read_timeout=60)
    request = ProviderRequest(model="claude-sonnet-5-5", system="", messages=[Message("user", [TextBlock("hi")])])
    started = time.monotonic()
    outcome = "completed"
    try:
        async for _ in provider.stream(request):
            pass
    except Exception as exc:
        outcome = f"{type(exc).__name__}: {str(exc)[:160]}"
    finally:
        await provider.aclose()
    print(json.dumps({"outcome": outcome, "wall": time.monotonic() - started}), flush=True)

asyncio.run(main())
"""


def _sse_head(extra: dict[str, str] | None = None) -> bytes:
    return http_head(200, {"content-type": "text/event-stream", "connection": "close", **(extra or {})})


def no_blank(_: RawRequest) -> Iterator[bytes]:
    yield _sse_head()
    line = b'data: {"type":"ping"}\n'
    piece = line * (MB // len(line))
    for _ in range(64):
        yield piece


def event_line(_: RawRequest) -> Iterator[bytes]:
    yield _sse_head()
    yield b"event: content_block_delta\ndata: "
    piece = b"a" * MB
    for _ in range(300):
        yield piece
    yield b"\n\n"


_BOMBS: dict[str, bytes] = {}


def _gzip(piece: bytes, total: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [packer.compress(piece) for _ in range(total // len(piece))]
    out.append(packer.flush())
    return b"".join(out)


def gzip_bomb(kind: str) -> Any:
    def answer(_: RawRequest) -> Iterator[bytes]:
        if kind not in _BOMBS:
            if kind == "zeros":
                _BOMBS[kind] = _gzip(b"\0" * MB, 600 * MB)
            else:
                ping = b'event: ping\ndata: {"type": "ping"}\n\n'
                _BOMBS[kind] = _gzip(ping * (MB // len(ping)), 600 * MB)
        body = _BOMBS[kind]
        yield http_head(200, {"content-type": "text/event-stream", "content-encoding": "gzip",
                              "content-length": str(len(body))})  # fmt: skip
        for i in range(0, len(body), MB):
            yield body[i : i + MB]

    return answer


def error_body(_: RawRequest) -> Iterator[bytes]:
    yield http_head(500, {"content-type": "application/json", "content-length": str(300 * MB)})
    piece = b"x" * MB
    for _ in range(300):
        yield piece


CASES = {
    "no_blank_64mb": no_blank,
    "event_line_300mb": event_line,
    "gzip_bomb_600mb": gzip_bomb("zeros"),
    "ping_bomb_600mb": gzip_bomb("pings"),
    "error_body_300mb": error_body,
}


def run_case(name: str, code_dir: Path, limit: float) -> dict[str, Any]:
    with RawEndpoint() as endpoint:
        endpoint.route("POST", "/v1/messages", CASES[name])
        env = {**os.environ, "PYTHONPATH": str(code_dir)}
        env.pop("ANTHROPIC_API_KEY", None)
        started = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, endpoint.url],
            env=env,
            cwd=code_dir,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip (cwd: `-c` puts it first on sys.path)
        killed = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - started > limit:
                os.kill(proc.pid, signal.SIGKILL)
                killed = True
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.05)
        wall = time.monotonic() - started
        assert proc.stdout is not None
        out = proc.stdout.read().decode(errors="replace").strip()
        proc.returncode = os.waitstatus_to_exitcode(status)
    result: dict[str, Any] = {
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "sent_mb": round(endpoint.sent / MB, 1),
    }
    if killed:
        result["outcome"] = f"killed after {limit:.0f} s"
    else:
        try:
            result["outcome"] = json.loads(out.splitlines()[-1])["outcome"]
        except (IndexError, ValueError, KeyError):
            result["outcome"] = f"exit {proc.returncode}: {out[-200:]}"
    return result


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=Path, help="a directory holding another coder_ls, measured beside")
    ap.add_argument("--code", type=Path, default=REPO, help="the coder_ls measured (default: this checkout)")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--limit", type=float, default=130.0)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    runs = [("after", args.code.resolve())] + ([("before", args.before.resolve())] if args.before else [])
    results: dict[str, dict[str, Any]] = {}
    for name in args.cases.split(","):
        for label, where in runs:
            found = run_case(name, where, args.limit)
            results[f"{name}/{label}"] = found
            line = f"{name:18} {label:6} cpu {found['cpu_s']:7.2f} s  peak {found['peak_rss_mb']:7.1f} MB  "
            line += f"wall {found['wall_s']:6.1f} s  sent {found['sent_mb']:6.1f} MB  {found['outcome']}"
            print(line, flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
