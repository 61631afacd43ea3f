"""What hooks cost a tool call. Run: `python benchmarks/bench_hooks.py`.

1. No hooks configured: the firing every tool call does anyway (PreToolUse and
   PostToolUse: the sources' stat signature, matching), in microseconds per call.
2. One `true` hook on PreToolUse: the dispatcher's time for it against the baseline of
   the same `bash -c true` started directly with asyncio (the hook's own cost), measured
   alternately in the same run; the ratio and the difference are what the dispatcher adds.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from coder_ls.hooks.dispatch import Hooks
from coder_ls.hooks.records import PostToolUse, PreToolUse

N = 200


def hooks_for(root: Path, home: Path) -> Hooks:
    return Hooks(root, {"HOME": str(home)}, trusted=lambda: True, secrets=lambda: (), show=lambda k, m: None)


async def direct() -> None:
    proc = await asyncio.create_subprocess_exec(
        "bash",
        "-c",
        "true",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    await proc.communicate(b"{}")


async def main() -> None:
    base = Path(tempfile.mkdtemp())
    root, home = base / "ws", base / "home"
    root.mkdir()
    home.mkdir()
    pre = PreToolUse(tool_name="Bash", tool_input={"command": "ls"}, tool_use_id="t")
    post = PostToolUse(tool_name="Bash", tool_input={"command": "ls"}, tool_response={"output": "x"})
    none = hooks_for(root, home)
    emit = lambda e: None  # noqa: E731
    start = time.perf_counter()
    for _ in range(N):
        await none.fire(pre, emit)
        await none.fire(post, emit)
    idle_us = (time.perf_counter() - start) / N * 1e6
    print(f"no hooks: {idle_us:.0f} us per tool call (PreToolUse + PostToolUse fired, nothing runs)")

    (root / ".claude").mkdir()
    settings = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}}
    (root / ".claude" / "settings.json").write_text(json.dumps(settings))
    one = hooks_for(root, home)
    await one.fire(pre, emit)  # warm: the sources read once
    hooked, plain = [], []
    for _ in range(N // 4):
        t = time.perf_counter()
        await direct()
        plain.append(time.perf_counter() - t)
        t = time.perf_counter()
        await one.fire(pre, emit)
        hooked.append(time.perf_counter() - t)
    p, h = statistics.median(plain) * 1e3, statistics.median(hooked) * 1e3
    print(
        f"one `true` hook: {h:.2f} ms median vs {p:.2f} ms for the same process started directly "
        f"(ratio {h / p:.2f}, +{h - p:.2f} ms)"
    )


if __name__ == "__main__":
    asyncio.run(main())
