"""Steps as Ray tasks (contract section 25): connect, send, cancel, retry a lost worker once.

The server is a Ray driver of an existing cluster (`tasks.executor.address`), connected
once per process on first use (`ray.init` in a thread: it blocks). The job's runtime
environment is the user's `runtimeEnv`, checked to hold no secret value (Ray logs it): the
API key reaches the workers from the nodes' own environment, named in `env_vars` by a
`${NAME}` reference at most, never as a task's argument (the arguments are the repository,
the prompt and the preset). `log_to_driver=False`: the workers' output never
reaches this process's stdout, which is the LSP channel.

A step is `worker.run_step` as a Ray task reserving `numCpus`; the base commit's bundle is
put in the object store once per commit and shared by the steps. `max_retries=1`: Ray runs
the step again once when its worker process or node dies (a lost worker); an exception
inside the step is not retried here (`longtask` retries what the model's errors allow).
Cancelling the awaiting coroutine cancels the Ray task (`KeyboardInterrupt` in it, which
kills the step's `coder-ls exec`) and waits a little for it to end.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from coder_ls.environ import secret_names
from coder_ls.guard.redact import MIN_SECRET_CHARS
from coder_ls.protocol.config import RayExecutor
from coder_ls.remote.snapshot import Snapshot

CANCEL_WAIT_SECONDS = 10.0
INSTALL_HINT = "tasks.executor kind ray needs the ray package: pip install 'coder-ls[ray]'"


class RemoteError(Exception):
    """The step did not run to an end on the cluster (no ray, no cluster, a lost worker twice)."""


class RemoteResult(msgspec.Struct, frozen=True, rename="camel"):
    where: str
    exit_code: int
    patch: bytes
    transcript: str
    stderr: str
    seconds: float


REFERENCE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")


def runtime_env(config: RayExecutor, env: Mapping[str, str], extra_secrets: Iterable[str] = ()) -> dict[str, Any]:
    """The job's runtime environment, checked: Ray writes it to the cluster's logs
    (`runtime_env_agent.log`), so no secret may be in it as a value. A secret-named entry
    (`environ.secret_names`: the API keys, `secrets.envNames`) must be a `${NAME}` reference,
    and no value may hold a secret of this server's environment."""
    out: dict[str, Any] = dict(config.runtime_env)
    given = out.get("env_vars", {})
    if not isinstance(given, dict) or not all(isinstance(v, str) for v in given.values()):
        raise RemoteError("tasks.executor.runtimeEnv.env_vars must map names to strings")
    names = set(secret_names(extra_secrets))
    values = {env[n]: n for n in names if len(env.get(n, "")) >= MIN_SECRET_CHARS}
    for name, value in given.items():
        if name in names and not REFERENCE.fullmatch(value):
            raise RemoteError(f"tasks.executor.runtimeEnv.env_vars.{name} must be a reference like "
                              f"\"${{{name}}}\" to a variable of the worker nodes: Ray logs the values")  # fmt: skip
        for secret, secret_name in values.items():
            if secret in value:
                raise RemoteError(f"tasks.executor.runtimeEnv.env_vars.{name} holds the value of {secret_name}: "
                                  "Ray logs the values; give the nodes the secret and reference it")  # fmt: skip
    return out


_lock = threading.Lock()
_connected: list[str] = []  # the address this process is connected to (at most one)


def _connect(config: RayExecutor, env: Mapping[str, str], extra_secrets: tuple[str, ...]) -> Any:
    job_env = runtime_env(config, env, extra_secrets)
    try:
        import ray
    except ImportError as exc:
        raise RemoteError(INSTALL_HINT) from exc
    with _lock:
        if _connected and _connected[0] == config.address and ray.is_initialized():
            return ray
        if ray.is_initialized():
            ray.shutdown()
        _connected.clear()
        try:
            ray.init(address=config.address, runtime_env=job_env or None,
                     log_to_driver=False, namespace="coder-ls", logging_level=logging.WARNING)  # fmt: skip
        except Exception as exc:  # ConnectionError, a bad address, a refused runtime_env
            raise RemoteError(f"cannot reach the Ray cluster at {config.address}: {exc}") from exc
        _connected.append(config.address)
        return ray


class RayRunner:
    """One `/task`'s connection to the cluster."""

    def __init__(self, config: RayExecutor, env: Mapping[str, str] | None = None, secrets: Iterable[str] = ()) -> None:
        self.config = config
        self.env = dict(env if env is not None else os.environ)
        self.secrets = tuple(secrets)
        self._bundles: dict[str, Any] = {}  # base commit -> the bundle's ObjectRef

    async def connect(self) -> Any:
        return await asyncio.to_thread(_connect, self.config, self.env, self.secrets)

    async def run(self, snapshot: Snapshot, prompt: str, name: str) -> RemoteResult:
        ray = await self.connect()
        from coder_ls.remote.worker import run_step

        bundle = self._bundles.get(snapshot.base)
        if bundle is None:
            bundle = self._bundles[snapshot.base] = await asyncio.to_thread(ray.put, snapshot.bundle)
        task = ray.remote(run_step).options(
            num_cpus=self.config.num_cpus, max_retries=1, retry_exceptions=False, name=name[:100]
        )
        ref = task.remote(bundle, snapshot.base, snapshot.diff, prompt, self.config.permissions)
        try:
            data = await asyncio.wrap_future(ref.future())
        except asyncio.CancelledError:
            await asyncio.shield(self._cancel(ray, ref))
            raise
        except ray.exceptions.WorkerCrashedError as exc:
            raise RemoteError(f"the step's worker was lost twice (it was retried once): {exc}") from exc
        except ray.exceptions.NodeDiedError as exc:
            raise RemoteError(f"the step's node died twice (it was retried once): {exc}") from exc
        except ray.exceptions.RayTaskError as exc:
            raise RemoteError(f"the step failed on the worker: {_last_line(str(exc))}") from exc
        except ray.exceptions.RayError as exc:
            raise RemoteError(f"Ray: {_last_line(str(exc))}") from exc
        return msgspec.convert(data, RemoteResult, from_attributes=False, str_keys=True)

    async def _cancel(self, ray: Any, ref: Any) -> None:
        """Cancel the Ray task and give it a moment to stop its `coder-ls exec`."""
        with contextlib.suppress(Exception):
            await asyncio.to_thread(ray.cancel, ref, force=False)
        with contextlib.suppress(Exception):
            await asyncio.to_thread(ray.wait, [ref], timeout=CANCEL_WAIT_SECONDS)


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:500] if lines else text[:500]
