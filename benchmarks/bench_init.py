"""Start-up: `initialize` latency against a minimal pygls server, imports on that path, idle RSS."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
from pathlib import Path

from common import (
    BASELINE_CMD,
    CODER_CMD,
    SMALL_REPO,
    LspClient,
    Result,
    init_git,
    median,
    now,
    rss_mb,
    server_env,
    temp_root,
)

HEAVY = ("anthropic", "httpx", "httpcore", "pydantic", "git", "watchdog", "sqlite3")


async def time_initialize(cmd: list[str], root: Path, *, initialized: bool = False) -> float:
    """Spawn -> initialize response, in ms (then shut the server down, untimed);
    `initialized`: send the `initialized` notification too before closing."""
    client = await LspClient.spawn(cmd, cwd=root, env=server_env(root))
    await client.initialize(root, initialized=initialized)
    elapsed = (now() - client.t_spawn) * 1000
    await client.close()
    return elapsed


async def bench_init_ratio(quick: bool) -> list[Result]:
    pairs = 2 if quick else 12
    coder: list[float] = []
    base: list[float] = []
    with temp_root() as tmp:
        root = init_git(tmp / "ws", SMALL_REPO)
        if not quick:  # one untimed start of each first: warm the page cache and .pyc files
            await time_initialize(CODER_CMD, root)
            await time_initialize(BASELINE_CMD, root)
        for i in range(pairs):
            order = [(CODER_CMD, coder), (BASELINE_CMD, base)]
            if i % 2:
                order.reverse()  # ABBA...: neither side always goes first
            for cmd, out in order:
                out.append(await time_initialize(cmd, root))
    ratio = median(coder) / median(base)
    return [
        Result(
            "init_ratio",
            "initialize latency / minimal pygls",
            ratio,
            1.10,
            unit="x",
            samples=coder,
            baseline=base,
            notes=[f"coder-ls median {median(coder):.0f} ms vs baseline {median(base):.0f} ms (spawn -> response)"],
        )
    ]


_IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")


async def _imports_before_initialize(cmd: list[str], root: Path) -> dict[str, tuple[int, int, int]]:
    """Run a server with PYTHONPROFILEIMPORTTIME=1; stop it (SIGSTOP) the moment `initialize`
    answers and drain its stderr: those are the imports on the path to the response.
    Returns {module: (self us, cumulative us, nesting depth)}."""
    env = server_env(root, {"PYTHONPROFILEIMPORTTIME": "1"})
    client = await LspClient.spawn(cmd, cwd=root, env=env, stderr=subprocess.PIPE)
    buf = bytearray()
    last_data = [now()]

    async def drain() -> None:
        assert client.proc.stderr is not None
        while chunk := await client.proc.stderr.read(65536):
            buf.extend(chunk)
            last_data[0] = now()

    drainer = asyncio.create_task(drain())
    await client.initialize(root, initialized=False)
    os.kill(client.pid, signal.SIGSTOP)
    try:
        while now() - last_data[0] < 0.3:  # noqa: ASYNC110 - quiet for 300 ms: the pipe is empty
            await asyncio.sleep(0.05)
    finally:
        os.kill(client.pid, signal.SIGCONT)
    text = buf.decode("utf-8", "replace")
    await client.close()
    drainer.cancel()
    with contextlib.suppress(BaseException):
        await drainer
    out: dict[str, tuple[int, int, int]] = {}
    for m in _IMPORT_LINE.finditer(text):
        out[m.group(4)] = (int(m.group(1)), int(m.group(2)), len(m.group(3)) // 2)
    return out


def _group(name: str) -> str:
    parts = name.split(".")
    return ".".join(parts[:2]) if parts[0] == "coder_ls" else parts[0]


async def bench_init_imports(quick: bool) -> list[Result]:
    with temp_root() as tmp:
        root = init_git(tmp / "ws", SMALL_REPO)
        coder = await _imports_before_initialize(CODER_CMD, root)
        base = await _imports_before_initialize(BASELINE_CMD, root)
    total = sum(v[0] for v in coder.values()) / 1000
    base_total = sum(v[0] for v in base.values()) / 1000
    extra = {k: v for k, v in coder.items() if k not in base}
    groups: dict[str, int] = {}
    for k, v in extra.items():
        groups[_group(k)] = groups.get(_group(k), 0) + v[0]
    top = sorted(groups.items(), key=lambda kv: -kv[1])
    heavy = sorted({n.split(".")[0] for n in coder if n.split(".")[0] in HEAVY})
    notes = [
        f"imports before the response: coder-ls {len(coder)} modules {total:.0f} ms, "
        f"baseline {len(base)} modules {base_total:.0f} ms (sum of self times)",
        f"coder-ls only: {len(extra)} modules, {sum(v[0] for v in extra.values()) / 1000:.0f} ms: "
        + ", ".join(f"{k} {v / 1000:.0f}" for k, v in top[:10]),
        "heavy packages on the path: " + (", ".join(heavy) if heavy else "none"),
    ]
    anthropic = any(n == "anthropic" or n.startswith("anthropic.") for n in coder)
    return [
        Result(
            "init_no_anthropic",
            "`anthropic` imported before initialize answers",
            1.0 if anthropic else 0.0,
            0.0,
            unit="bool",
            notes=notes,
        )
    ]


async def bench_idle_rss(quick: bool) -> list[Result]:
    runs = 1 if quick else 3
    values: list[float] = []
    with temp_root() as tmp:
        root = init_git(tmp / "ws", SMALL_REPO)
        for _ in range(runs):
            client = await LspClient.spawn(CODER_CMD, cwd=root, env=server_env(root))
            try:
                await client.initialize(root)
                await client.execute("coder.input", {"text": "/help"})
                await asyncio.sleep(1.0)
                value = rss_mb(client.pid)
                if value is not None:
                    values.append(value)
            finally:
                await client.close()
    return [
        Result(
            "idle_rss",
            "idle RSS after initialize + /help",
            median(values) if values else None,
            60.0,
            unit="MB",
            samples=values,
            error=None if values else "could not read /proc/<pid>/status",
        )
    ]


BENCHMARKS = {
    "init_ratio": bench_init_ratio,
    "init_imports": bench_init_imports,
    "idle_rss": bench_idle_rss,
}
