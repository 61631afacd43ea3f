"""Shared pieces of the benchmarks: a tiny JSON-RPC/LSP client, workspaces, statistics.

The client is deliberately minimal (asyncio subprocess pipes, Content-Length framing,
msgspec JSON) so that its own cost stays far below the millisecond figures it measures.
It answers the server's requests with what a cooperative editor would say
(`workDoneProgress/create` -> null, `applyEdit` -> applied, `showMessageRequest` ->
"Allow once", anything else -> null).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
CODER_CMD = [sys.executable, "-m", "coder_ls"]
BASELINE_CMD = [sys.executable, str(BENCH_DIR / "baseline_server.py")]

_enc = msgspec.json.Encoder()
_dec = msgspec.json.Decoder()
now = time.perf_counter


# ------------------------------------------------------------------ statistics


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    s = sorted(values)
    k = max(0, min(len(s) - 1, math.ceil(q / 100 * len(s)) - 1))
    return s[k]


def median(values: list[float]) -> float:
    s = sorted(values)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


@dataclass
class Result:
    """One row of the final table.

    `value` is the figure compared with `goal` (`op` is "<=" or ">="); `samples` (when the
    figure is a latency) give median/p90/n; `baseline` is the other side of a ratio row.
    """

    name: str
    title: str
    value: float | None
    goal: float | None  # None: an informational row (no verdict)
    op: str = "<="
    unit: str = "ms"
    samples: list[float] = field(default_factory=list)
    baseline: list[float] | None = None
    notes: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def passed(self) -> bool | None:
        if self.value is None or self.error or self.goal is None:
            return None
        return self.value <= self.goal if self.op == "<=" else self.value >= self.goal

    def verdict(self) -> str:
        if self.error or self.value is None:
            return "ERROR"
        if self.goal is None:
            return "info"
        return "PASS" if self.passed else "MISS"

    def stats(self, values: list[float] | None) -> dict[str, float] | None:
        if not values:
            return None
        return {"median": median(values), "p90": percentile(values, 90), "n": len(values)}

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "value": self.value,
            "goal": self.goal,
            "op": self.op,
            "unit": self.unit,
            "verdict": self.verdict(),
            "stats": self.stats(self.samples),
            "baseline": self.stats(self.baseline),
            "samples": self.samples,
            "baselineSamples": self.baseline,
            "notes": self.notes,
            "error": self.error,
        }


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "ms":
        return f"{value:.2f} ms" if value < 10 else f"{value:.1f} ms"
    if unit == "x":
        return f"{value:.3f}x"
    if unit == "MB":
        return f"{value:.1f} MB"
    if unit == "tok":
        return f"{value:.0f} tok"
    if unit == "bool":
        return "yes" if value else "no"
    if unit == "share":
        return f"{value:.3f}"
    return f"{value:g} {unit}"


# ------------------------------------------------------------------ workspaces


def git_env() -> dict[str, str]:
    return {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    }


def init_git(path: Path, files: dict[str, str] | None = None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    env = git_env()
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, env=env)
    for name, text in (files or {}).items():
        p = path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    if files:
        subprocess.run(["git", "-C", str(path), "add", "-A"], check=True, env=env)
        subprocess.run(["git", "-C", str(path), "commit", "-qm", "init"], check=True, env=env)
    return path


SMALL_REPO = {
    "README.md": "# bench\n\nA small workspace for coder-ls benchmarks.\n",
    "src/app.py": "def add(a, b):\n    return a + b\n\n\ndef main():\n    print(add(2, 3))\n",
    "src/util.py": "".join(f"def f{i}(x):\n    return x * {i}\n\n" for i in range(20)),
    "tests/test_app.py": "from src.app import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}


@contextlib.contextmanager
def temp_root(prefix: str = "coder-bench-") -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def byte_compile(*trees: Path) -> None:
    """Byte-compile coder_ls (this checkout's, or the given package folders) as an install
    does: pip compiles a wheel's modules, but with `PYTHONDONTWRITEBYTECODE` set (this
    machine sets it) a checkout would compile every changed module at each start, and a
    start-up figure would measure the compiler (about 110 ms of a first prompt's 350)."""
    import compileall

    for tree in trees or (REPO / "coder_ls",):
        compileall.compile_dir(str(tree), quiet=1)


def server_env(root: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The server's environment: no ANTHROPIC_* leaking in, a private XDG config dir."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    xdg = root.parent / f".xdg-{root.name}"
    xdg.mkdir(exist_ok=True)
    env["XDG_CONFIG_HOME"] = str(xdg)
    env["XDG_STATE_HOME"] = str(root.parent / f".xdg-state-{root.name}")
    env.update(extra or {})
    return env


def write_user_config(root: Path, values: dict[str, Any]) -> None:
    """The user's own config file for a server on `root` (its private XDG dir): settings a
    workspace file could not widen without /trust, such as the permission preset."""
    path = root.parent / f".xdg-{root.name}" / "coder" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(values))


# ------------------------------------------------------------------ the client


class RpcError(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.error = error


class LspClient:
    """A raw LSP client over a child's stdio."""

    def __init__(self, proc: asyncio.subprocess.Process, t_spawn: float) -> None:
        self.proc = proc
        self.t_spawn = t_spawn
        self._ids = itertools.count(1)
        self._pending: dict[Any, asyncio.Future[Any]] = {}
        self.notification_handlers: list[Callable[[str, Any], None]] = []
        self.request_answers: dict[str, Callable[[Any], Any]] = {
            "window/workDoneProgress/create": lambda p: None,
            "workspace/applyEdit": lambda p: {"applied": True},
            "window/showMessageRequest": lambda p: {"title": "Allow once"},
            "workspace/configuration": lambda p: [None for _ in (p or {}).get("items", [])],
        }
        self.server_requests: list[str] = []
        self._reader = asyncio.get_running_loop().create_task(self._read_loop())
        self.closed = asyncio.get_running_loop().create_future()

    @classmethod
    async def spawn(
        cls,
        cmd: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        stderr: int | None = subprocess.DEVNULL,
    ) -> LspClient:
        t0 = now()
        proc = await asyncio.create_subprocess_exec(
            *cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=str(cwd),
            env=env,
            limit=64 * 1024 * 1024,
        )
        return cls(proc, t0)

    @property
    def pid(self) -> int:
        return self.proc.pid

    # -- framing
    def _write(self, payload: dict[str, Any]) -> None:
        body = _enc.encode(payload)
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def _read_loop(self) -> None:
        reader = self.proc.stdout
        assert reader is not None
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                msg = _dec.decode(await reader.readexactly(length))
                self._dispatch(msg)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(ConnectionError("the server closed its stdout"))
            if not self.closed.done():
                self.closed.set_result(None)

    def _dispatch(self, msg: dict[str, Any]) -> None:
        method = msg.get("method")
        if method is None:  # a response
            fut = self._pending.pop(msg.get("id"), None)
            if fut is not None and not fut.done():
                if "error" in msg and msg["error"] is not None:
                    fut.set_exception(RpcError(msg["error"]))
                else:
                    fut.set_result(msg.get("result"))
            return
        if "id" in msg:  # a request from the server
            self.server_requests.append(method)
            answer = self.request_answers.get(method, lambda p: None)(msg.get("params"))
            self._write({"jsonrpc": "2.0", "id": msg["id"], "result": answer})
            return
        for handler in self.notification_handlers:
            handler(method, msg.get("params"))

    # -- API
    def request_future(self, method: str, params: Any = None, msg_id: Any = None) -> tuple[Any, asyncio.Future[Any]]:
        msg_id = next(self._ids) if msg_id is None else msg_id
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = fut
        self._write({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return msg_id, fut

    async def request(self, method: str, params: Any = None, timeout: float = 60.0) -> Any:
        _, fut = self.request_future(method, params)
        return await asyncio.wait_for(fut, timeout)

    def notify(self, method: str, params: Any = None) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def execute_future(
        self, command: str, argument: dict[str, Any] | None = None, *, token: Any = None
    ) -> tuple[Any, asyncio.Future[Any]]:
        params: dict[str, Any] = {"command": command, "arguments": [argument or {}]}
        if token is not None:
            params["workDoneToken"] = token
        return self.request_future("workspace/executeCommand", params)

    async def execute(
        self, command: str, argument: dict[str, Any] | None = None, *, token: Any = None, timeout: float = 60.0
    ) -> Any:
        _, fut = self.execute_future(command, argument, token=token)
        return await asyncio.wait_for(fut, timeout)

    async def initialize(self, root: Path, *, initialized: bool = True, options: Any = None) -> Any:
        uri = root.as_uri()
        params = {
            "processId": os.getpid(),
            "rootUri": uri,
            "workspaceFolders": [{"uri": uri, "name": root.name}],
            "capabilities": {
                "window": {"workDoneProgress": True, "showMessage": {}},
                "workspace": {
                    "applyEdit": True,
                    "workspaceEdit": {"documentChanges": True, "resourceOperations": ["create"]},
                    "executeCommand": {},
                },
            },
            "initializationOptions": options,
        }
        result = await self.request("initialize", params)
        if initialized:
            self.notify("initialized", {})
        return result

    async def close(self, timeout: float = 5.0) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.request("shutdown", None), timeout)
            self.notify("exit", None)
        with contextlib.suppress(Exception):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            await self.proc.wait()
        self._reader.cancel()
        with contextlib.suppress(BaseException):
            await self._reader

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(signal.SIGKILL)


@contextlib.asynccontextmanager
async def coder_server(root: Path, *, env: dict[str, str] | None = None, initialized: bool = True):
    """A started and initialized coder-ls on `root`."""
    client = await LspClient.spawn(CODER_CMD, cwd=root, env=server_env(root, env))
    try:
        await client.initialize(root, initialized=initialized)
        yield client
    finally:
        await client.close()


class EventWaiter:
    """Collects `coder/event` notifications and lets a benchmark wait for one."""

    def __init__(self, client: LspClient) -> None:
        self.events: list[dict[str, Any]] = []
        self._waiters: list[tuple[Callable[[dict[str, Any]], bool], asyncio.Future[dict[str, Any]]]] = []
        client.notification_handlers.append(self._on)

    def _on(self, method: str, params: Any) -> None:
        if method != "coder/event" or not isinstance(params, dict):
            return
        self.events.append(params)
        for pred, fut in list(self._waiters):
            if not fut.done() and pred(params):
                fut.set_result(params)
                self._waiters.remove((pred, fut))

    def expect(self, pred: Callable[[dict[str, Any]], bool]) -> asyncio.Future[dict[str, Any]]:
        """A future for the next event matching `pred` (register before triggering it)."""
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiters.append((pred, fut))
        return fut

    def clear(self) -> None:
        self.events.clear()


def rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def pgroup_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def pgroup_members(pgid: int) -> list[int]:
    """Pids whose process group is `pgid`, zombies excluded (from /proc)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        rest = stat[stat.rfind(")") + 2 :].split()
        if rest[0] != "Z" and int(rest[2]) == pgid:
            out.append(int(name))
    return out
