"""The sandbox's network proxy against the libraries that could have been it.

Each candidate runs as its own process on 127.0.0.1, allowing `localhost` only, and is
measured the same way: import time (a fresh interpreter, median of 3), peak RSS of the
proxy process after the downloads, throughput of a 50 MB download through it as plain
HTTP and through a CONNECT tunnel (curl, median of 3), and what it does with the requests
the sandbox cares about (a refused name, plain and CONNECT; a second request to a refused
host on a kept-alive connection; a `Host` header naming another host; an IP literal).

    python benchmarks/bench_netproxy.py [--python PY] [--only NAME,...]

`--python`: an interpreter where the libraries are installed (`pip install proxy.py
pproxy mitmproxy` into a scratch venv); the ones missing are skipped. coder-ls's own
proxy (`guard/netproxy.py` behind `guard/netfwd.py`, the way a sandbox reaches it) runs
from this checkout. Results: benchmarks/README.md, "The sandbox's network proxy".
"""

from __future__ import annotations

import argparse
import contextlib
import http.server
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIG = 50 * 1024 * 1024
BLOB = os.urandom(1024 * 1024)


class _Target(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list[str] = []

    def do_GET(self) -> None:
        _Target.seen.append(f"{self.requestline} Host={self.headers.get('Host')}")
        if self.path == "/big":
            self.send_response(200)
            self.send_header("Content-Length", str(BIG))
            self.end_headers()
            for _ in range(BIG // len(BLOB)):
                self.wfile.write(BLOB)
            return
        body = f"target saw {self.requestline} Host={self.headers.get('Host')}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


PROXY_PY_PLUGIN = """
from proxy.http.proxy import HttpProxyBasePlugin
from proxy.http.exception import HttpRequestRejected

class AllowLocalhost(HttpProxyBasePlugin):
    def before_upstream_connection(self, request):
        host = (request.host or b"").decode()
        if host != "localhost":
            msg = f"coder-ls proxy: {host} is not allowed (sandbox.network)".encode()
            raise HttpRequestRejected(status_code=403, reason=msg, body=msg)
        return request
"""

MITM_ADDON = """
from mitmproxy import http

def _refuse(flow):
    if flow.request.host != "localhost":
        msg = f"coder-ls proxy: {flow.request.host} is not allowed (sandbox.network)"
        flow.response = http.Response.make(403, msg.encode(), {"Content-Type": "text/plain"})

def http_connect(flow):
    _refuse(flow)

def requestheaders(flow):
    _refuse(flow)
"""

OWN = """
import asyncio, subprocess, sys
from pathlib import Path
from coder_ls.guard import netfwd, netproxy
from coder_ls.protocol.config import NetworkDomains

async def main():
    proxy = netproxy.NetProxy(Path(sys.argv[1]))
    handle = proxy.open(NetworkDomains(allowed_domains=("localhost",)))
    fwd = subprocess.Popen([*netfwd.argv_prefix(handle, int(sys.argv[2])), "sleep", "3600"])
    try:
        await asyncio.sleep(3600)
    finally:
        fwd.kill()
asyncio.run(main())
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def candidates(python: str, tmp: Path, port: int) -> dict[str, tuple[str, list[str], dict[str, str]]]:
    """name -> (module to time the import of, argv, extra env)."""
    (tmp / "bench_plugin.py").write_text(PROXY_PY_PLUGIN)
    (tmp / "mitm_addon.py").write_text(MITM_ADDON)
    mitmdump = str(Path(python).with_name("mitmdump"))
    return {
        "coder-ls netproxy": (
            "coder_ls.guard.netproxy",
            [sys.executable, "-c", OWN, str(tmp), str(port)],
            {"PYTHONPATH": str(ROOT)},
        ),
        "proxy.py": (
            "proxy",
            [
                python,
                "-m",
                "proxy",
                "--hostname",
                "127.0.0.1",
                "--port",
                str(port),
                "--threaded",
                "--num-acceptors",
                "1",
                "--plugins",
                "bench_plugin.AllowLocalhost",
                "--log-level",
                "e",
            ],
            {"PYTHONPATH": str(tmp)},
        ),
        "pproxy": (
            "pproxy",
            [str(Path(python).with_name("pproxy")), "-l", f"http://127.0.0.1:{port}", "-b", "{(?!localhost$).*}"],
            {},
        ),
        "mitmproxy": (
            "mitmproxy.tools.main",
            [
                mitmdump,
                "-q",
                "--listen-host",
                "127.0.0.1",
                "-p",
                str(port),
                "--ignore-hosts",
                ".*",
                "--set",
                "connection_strategy=lazy",
                "-s",
                str(tmp / "mitm_addon.py"),
            ],
            {},
        ),
    }


def import_ms(python: str, module: str, env: dict[str, str]) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    runs = []
    for _ in range(3):
        out = subprocess.run(
            [python, "-c", code], capture_output=True, text=True, env={**os.environ, **env}, check=True
        )
        runs.append(float(out.stdout) * 1000)
    return statistics.median(runs)


def _curl(proxy_port: int, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["curl", "-sS", "--noproxy", "", "-x", f"http://127.0.0.1:{proxy_port}", "--max-time", "60", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def throughput(proxy_port: int, target: int, tunnel: bool) -> float:
    """MB/s of the 50 MB download, median of 3."""
    runs = []
    for _ in range(3):
        args = ["-o", "/dev/null", "-w", "%{speed_download}", f"http://localhost:{target}/big"]
        done = _curl(proxy_port, *(["-p"] if tunnel else []), *args)
        runs.append(float(done.stdout or 0) / 1e6)
    return statistics.median(runs)


def raw(proxy_port: int, data: bytes, wait: float = 2.0) -> str:
    """What the proxy answers to `data` sent on one connection (until it closes or `wait`)."""
    with socket.create_connection(("127.0.0.1", proxy_port), timeout=wait) as s:
        s.sendall(data)
        got = b""
        with contextlib.suppress(OSError):
            while chunk := s.recv(65536):
                got += chunk
    return got.decode("latin-1")


def behaviour(proxy_port: int, target: int) -> dict[str, str]:
    out: dict[str, str] = {}
    done = _curl(proxy_port, "-i", "http://example.com/")
    out["refused, plain"] = (done.stdout.splitlines() or [done.stderr.strip()])[0][:90]
    out["refused, plain: body names it"] = str("example.com is not allowed" in done.stdout)
    done = _curl(proxy_port, "-v", "https://example.com/")
    line = next((x for x in done.stderr.splitlines() if x.startswith("< HTTP/")), done.stderr.strip()[-60:])
    out["refused, CONNECT"] = line[:90]
    _Target.seen.clear()
    two = (
        f"GET http://localhost:{target}/first HTTP/1.1\r\nHost: localhost:{target}\r\n\r\n"
        "GET http://example.com/second HTTP/1.1\r\nHost: example.com\r\n\r\n"
    ).encode()
    answer = raw(proxy_port, two)
    second = [s for s in _Target.seen if "second" in s]
    out["kept-alive 2nd request to a refused host"] = (
        "refused"
        if "example.com is not allowed" in answer
        else ("sent to the allowed host: " + second[0])
        if second
        else "dropped"
    )
    _Target.seen.clear()
    answer = raw(proxy_port, f"GET http://localhost:{target}/ HTTP/1.1\r\nHost: example.com\r\n\r\n".encode())
    out["Host header naming another host"] = (
        f"forwarded as {_Target.seen[0]}" if _Target.seen else (answer.splitlines() or ["closed"])[0][:80]
    )
    answer = raw(proxy_port, f"CONNECT 127.0.0.1:{target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode(), 1.0)
    out["CONNECT to an IP literal"] = (answer.splitlines() or ["closed without an answer"])[0][:80]
    return out


def rss_kb(pid: int) -> int:
    total = 0
    for p in [pid, *_children(pid)]:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1])
    return total


def _children(pid: int) -> list[int]:
    with contextlib.suppress(OSError):
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    return []


@contextlib.contextmanager
def running(argv: list[str], env: dict[str, str], port: int) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(
        argv, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            time.sleep(0.1)
        yield proc
    finally:
        os.killpg(proc.pid, 9)  # the forwarder too
        proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Target)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    target = server.server_address[1]
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in candidates(args.python, Path(tmp), 0):
            if args.only and name not in args.only.split(","):
                continue
            port = _free_port()
            module, argv, env = candidates(args.python, Path(tmp), port)[name]
            python = sys.executable if name.startswith("coder-ls") else args.python
            try:
                ms = import_ms(python, module, env)
            except subprocess.CalledProcessError:
                print(f"{name}: not installed in {python}: skipped", file=sys.stderr)
                continue
            with running(argv, env, port) as proc:
                row: dict[str, object] = {"import ms": round(ms)}
                row["plain MB/s"] = round(throughput(port, target, tunnel=False))
                row["CONNECT MB/s"] = round(throughput(port, target, tunnel=True))
                row["peak RSS MB"] = round(rss_kb(proc.pid) / 1024)
                row.update(behaviour(port, target))
            results[name] = row
            print(name, json.dumps(row, indent=1), flush=True)
    server.shutdown()
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
