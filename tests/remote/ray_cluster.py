"""A local Ray cluster for the remote-step tests and the benchmark: one head node with no
CPUs (so no step can run there) and one worker node with `cpus` slots, in their own
temporary folder, each `ray start --block` in its own process group, killed by group (and
only those) at the end. `skip_reason()` says why none can start here (no `ray` package).

Loopback only is what we ask (`--node-ip-address=127.0.0.1`), but Ray 2.60 replaces a
loopback node address by the machine's own (`services.resolve_ip_for_localhost`; the
switch that keeps loopback also refuses a second node) and its servers listen on every
interface. So the cluster requires a token (`RAY_AUTH_MODE=token`, a random
`RAY_AUTH_TOKEN`): nothing without it can use it for the minute it is up. `driver_env`
is what a driver (the coder-ls server under test) needs to connect."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

READY_SECONDS = 90.0
CLUSTER_KEY = "sk-ant-cluster-only-0123456789abcdef"  # the tests give it to the worker node's environment only


def skip_reason() -> str | None:
    try:
        import ray  # noqa: F401
    except ImportError:
        return "ray is not installed (pip install 'coder-ls[ray]'): the Ray executor is not tested here"
    if not (Path(sys.executable).parent / "ray").exists():
        return f"no `ray` command beside {sys.executable}"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    def __init__(self, address: str, temp: Path, groups: list[subprocess.Popen[bytes]], token: str) -> None:
        self.address, self.temp, self.groups = address, temp, groups
        self.driver_env = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token}

    def nodes(self) -> dict[str, float]:
        """node id -> its CPUs, asked of the cluster by a short-lived driver."""
        code = (
            "import json, ray; ray.init(address=%r, logging_level='ERROR'); "
            "print(json.dumps({n['NodeID']: n['Resources'].get('CPU', 0) for n in ray.nodes() if n['Alive']}))"
        )
        out = subprocess.run([sys.executable, "-c", code % self.address], capture_output=True, text=True,
                             stdin=subprocess.DEVNULL, timeout=120, env={**os.environ, **self.driver_env})  # fmt: skip
        return dict(json.loads(out.stdout.strip().splitlines()[-1]))

    def session_dir(self) -> Path:
        return (self.temp / "session_latest").resolve()


def _start(args: list[str], env: Mapping[str, str], log: Path) -> subprocess.Popen[bytes]:
    ray = str(Path(sys.executable).parent / "ray")
    with log.open("ab") as out:
        return subprocess.Popen([ray, "start", "--block", "--disable-usage-stats", *args], env=dict(env),
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)  # fmt: skip


def _wait_started(proc: subprocess.Popen[bytes], log: Path) -> None:
    """`ray start --block` says "Ray runtime started" once its node is up."""
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"ray start ended early: {log.read_text(errors='replace')[-2000:]}")
        if "Ray runtime started" in log.read_text(errors="replace"):
            return
        time.sleep(0.3)
    raise RuntimeError(f"ray start did not start a node in {READY_SECONDS:.0f} s; see {log}")


def stop(groups: list[subprocess.Popen[bytes]]) -> None:
    """Only the process groups this module started: TERM, a grace, then KILL."""
    for proc in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    for proc in groups:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(max(0.1, deadline - time.monotonic()))
    for proc in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(5)


@contextlib.contextmanager
def local_cluster(cpus: int, env: Mapping[str, str] | None = None) -> Iterator[Cluster]:
    """Head (0 CPUs) + one worker node (`cpus`), loopback addresses. `env`: the nodes' own
    environment (PYTHONPATH so the workers import this checkout's coder_ls)."""
    temp = Path(tempfile.mkdtemp(prefix="crray", dir="/tmp"))  # short: Ray's socket paths
    port = free_port()
    groups: list[subprocess.Popen[bytes]] = []
    cluster = Cluster(f"127.0.0.1:{port}", temp, groups, secrets.token_hex(24))
    node_env = {**os.environ, **(env or {}), **cluster.driver_env, "RAY_USAGE_STATS_ENABLED": "0"}
    common = ["--node-ip-address=127.0.0.1", f"--temp-dir={temp}"]
    try:
        groups.append(_start(["--head", f"--port={port}", "--num-cpus=0", "--include-dashboard=false",
                              f"--dashboard-port={free_port()}", *common],
                             node_env, temp / "head.log"))  # fmt: skip
        _wait_started(groups[0], temp / "head.log")
        groups.append(_start([f"--address={cluster.address}", f"--num-cpus={cpus}", *common], node_env,
                             temp / "worker.log"))  # fmt: skip
        _wait_started(groups[1], temp / "worker.log")
        yield cluster
    finally:
        stop(groups)
        shutil.rmtree(temp, ignore_errors=True)
