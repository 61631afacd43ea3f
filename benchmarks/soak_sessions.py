"""A soak of one session: many submissions against the fake, and what grows.

    python benchmarks/soak_sessions.py [--submissions 1000] [--every 100] [--write-kb 8] [--json out.json]

One real server (`python -m coder_ls`, preset `yolo`, the default sandbox) on a small git
workspace, one session, submissions in a write-heavy mix, cycling:

- an agent turn that writes a generated file of `--write-kb` KB with the `write` tool
  (its input is stored verbatim in the log), then answers;
- an agent turn that runs `true` with the `bash` tool, then answers;
- an agent turn that only answers;
- a `!echo` shell command.

Every `--every` submissions it prints the server's RSS, open fds and threads, the session
log's bytes (its text, and on disk: closed segments past 4 MiB are gzipped) and the text
bytes per submission since the last sample; at the end the log's growth per submission of each kind. A submission that
does not complete, or a request the fake refuses, stops the run.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO, SMALL_REPO, coder_server, init_git, rss_mb, temp_root, write_user_config

from coder_ls.store.segments import total_size

sys.path.insert(0, str(REPO / "tests" / "fakes"))
from anthropic_server import FakeAnthropicServer, reply

_ids = itertools.count(1)
KINDS = ("write", "bash", "text", "shell")


def _call(name: str, input: dict[str, Any]) -> dict[str, Any]:
    return reply("", toolCalls=[{"id": f"toolu_{next(_ids):06d}", "name": name, "input": input}])


def _body(n: int, kb: int) -> str:
    lines = [f"def f_{n}_{i}(x):\n    return x * {i} + {n}  # generated for submission {n}\n" for i in range(kb * 16)]
    return "".join(lines)[: kb * 1024]


def _proc_count(pid: int, what: str) -> int:
    if what == "fds":
        return len(os.listdir(f"/proc/{pid}/fd"))
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return -1


def log_bytes(root: Path, sid: str) -> int:
    """On disk: every segment, compressed ones as they are."""
    return sum(p.stat().st_size for p in (root / ".coder" / "sessions").glob(f"{sid}.jsonl*"))


def text_bytes(root: Path, sid: str) -> int:
    """What the log holds: compressed segments counted uncompressed."""
    return total_size(root / ".coder" / "sessions" / f"{sid}.jsonl")


async def soak(submissions: int, every: int, write_kb: int) -> dict[str, Any]:
    fake = FakeAnthropicServer().start()
    samples: list[dict[str, Any]] = []
    growth: dict[str, list[int]] = {k: [] for k in KINDS}
    try:
        with temp_root("coder-soak-") as tmp:
            root = init_git(tmp / "ws", dict(SMALL_REPO))
            write_user_config(root, {"permissions": "yolo"})
            env = {"ANTHROPIC_API_KEY": "x", "ANTHROPIC_BASE_URL": fake.url}
            async with coder_server(root, env=env) as client:
                pid, sid = client.pid, ""
                t0 = time.monotonic()
                last = 0
                for n in range(submissions):
                    kind = KINDS[n % len(KINDS)]
                    args: dict[str, Any] = {"text": f"submission {n}: {kind}"}
                    if kind == "write":
                        fake.push(
                            _call("write", {"path": f"gen/f{n % 50}.py", "content": _body(n, write_kb)}), reply("ok")
                        )
                    elif kind == "bash":
                        fake.push(_call("bash", {"command": "true"}), reply("ok"))
                    elif kind == "text":
                        fake.push(reply(f"an answer of a few words, number {n}"))
                    else:
                        args = {"text": f"!echo {n}"}
                    if sid:
                        args["sessionId"] = sid
                    before = text_bytes(root, sid) if sid else 0
                    r = await client.execute("coder.input", args, token=f"soak-{n}", timeout=120)
                    if r["status"] != "completed":
                        raise RuntimeError(f"submission {n} ({kind}) {r['status']}: {r.get('error')}")
                    sid = r["sessionId"]
                    if fake.rejections:
                        raise RuntimeError(f"the fake refused a request: {fake.rejections[:1]}")
                    size = text_bytes(root, sid)
                    if n:
                        growth[kind].append(size - before)
                    if (n + 1) % every == 0 or n + 1 == submissions:
                        sample = {
                            "submissions": n + 1,
                            "seconds": round(time.monotonic() - t0, 1),
                            "rss_mb": round(rss_mb(pid) or -1, 1),
                            "fds": _proc_count(pid, "fds"),
                            "threads": _proc_count(pid, "threads"),
                            "log_text_bytes": size,
                            "log_disk_bytes": log_bytes(root, sid),
                            "bytes_per_submission": round((size - last) / every),
                        }
                        last = size
                        samples.append(sample)
                        print(json.dumps(sample), flush=True)
    finally:
        fake.stop()
    per_kind = {k: round(sum(v) / len(v)) for k, v in growth.items() if v}
    return {"samples": samples, "bytes_per_submission_by_kind": per_kind, "write_kb": write_kb}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--submissions", type=int, default=1000)
    ap.add_argument("--every", type=int, default=100)
    ap.add_argument("--write-kb", type=int, default=8)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    out = asyncio.run(soak(args.submissions, args.every, args.write_kb))
    print("log growth per submission, by kind (bytes):", json.dumps(out["bytes_per_submission_by_kind"]))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
