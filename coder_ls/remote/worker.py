"""What runs on a worker: the step's repository, its agent, its patch and transcript.

`run_step` is a plain function (Ray ships it by reference: the worker imports
`coder_ls.remote.worker`, so `coder_ls` must be installed where the workers run: the same
environment, or the job's `runtime_env` `pip`/`working_dir`). It

1. clones the base commit from the bundle into a temporary folder and applies the
   uncommitted diff, then records that state as the step's own base commit;
2. runs the prompt with `coder-ls exec --json --permissions P` there: the same agent loop,
   sandbox and policy as in an editor, non-interactive (a call the preset would ask about is
   denied and said in the transcript), stdin from /dev/null, in its own process group;
3. returns the step's changes (`git diff --binary` against that base, the state directory
   `.coder/` ignored as in the user's repository), the JSON-lines transcript and where it ran.

An interrupt (Ray's cancel raises `KeyboardInterrupt` in the task) or any error kills the
process group before the folder is removed; a worker process that dies (killed, out of
memory) takes the exec with it through the reaper, and Ray runs the step again once.
Nothing here reads or writes the API key: the provider in `coder-ls exec` finds it in the
environment the worker has (the node's, or the job's `runtime_env` reference to it).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from coder_ls.guard.gitsafe import BASE_FLAGS

REAPER = Path(__file__).parent.parent / "mcp" / "reaper.py"

GIT_IDENTITY = ("-c", "user.name=coder-ls", "-c", "user.email=coder-ls@localhost")
KILL_GRACE_SECONDS = 3.0


class StepFailed(Exception):
    """The step could not be set up on the worker (bad bundle, a diff that does not apply)."""


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    run = subprocess.run(
        ["git", *BASE_FLAGS, *GIT_IDENTITY, *args],
        cwd=repo, input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True, env={**os.environ, "GIT_TERMINAL_PROMPT": "0"}, check=False,
    )  # fmt: skip
    if run.returncode != 0:
        raise StepFailed(f"git {args[0]} failed: {run.stderr.decode(errors='replace').strip()[-400:]}")
    return run.stdout


def build_repo(folder: Path, bundle: bytes, base: str, diff: bytes) -> Path:
    """The workspace as the parent saw it, committed, so the step's changes diff against it."""
    bundle_path = folder / "base.bundle"
    bundle_path.write_bytes(bundle)
    repo = folder / "repo"
    _git(folder, "clone", "-q", "--no-checkout", str(bundle_path), str(repo))
    _git(repo, "checkout", "-q", "--detach", base)
    if diff:
        _git(repo, "apply", "--binary", "--whitespace=nowarn", "-", stdin=diff)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--allow-empty", "--no-verify", "-m", "coder-ls: the step's base")
    return repo


def step_patch(repo: Path) -> bytes:
    _git(repo, "add", "-A")
    # the form `isolation.patches.apply_patch` takes
    return _git(repo, "diff", "--cached", "--binary", "--full-index", "--no-renames", "--no-ext-diff", "HEAD")


def where() -> str:
    """`ray:<node ip>/<node id>` inside a Ray task, else `host:<hostname>`."""
    try:
        import ray

        node = ray.get_runtime_context().get_node_id()
        ip = next((n["NodeManagerAddress"] for n in ray.nodes() if n.get("NodeID") == node), None)
        return f"ray:{ip or ray.util.get_node_ip_address()}/{node[:12]}"
    except Exception:
        return f"host:{socket.gethostname()}"


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """The exec process and everything it started: TERM (it ends its turn), then KILL."""
    for sig, grace in ((signal.SIGTERM, KILL_GRACE_SECONDS), (signal.SIGKILL, KILL_GRACE_SECONDS)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(grace)
            return


def run_exec(repo: Path, prompt: str, permissions: str, log: Path) -> int:
    """`coder-ls exec --json` in `repo`; its stdout (the transcript) goes to `log`."""
    # behind the reaper (`mcp/reaper.py`): when this worker process dies (a lost worker, Ray's
    # force-cancel), the kernel tells it, and it kills the exec and all it started
    reaper = [sys.executable, "-I", str(REAPER), "--parent", str(os.getpid())]
    argv = [*reaper, sys.executable, "-m", "coder_ls", "exec", "--json", "--permissions", permissions, prompt]
    with log.open("wb") as out, (log.parent / "stderr.txt").open("wb") as err:
        proc = subprocess.Popen(argv, cwd=repo, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                start_new_session=True)  # fmt: skip
        try:
            while True:
                try:
                    return proc.wait(0.2)
                except subprocess.TimeoutExpired:
                    continue
        except BaseException:
            _stop(proc)
            raise


def run_step(bundle: bytes, base: str, diff: bytes, prompt: str, permissions: str) -> dict[str, Any]:
    """The Ray task's body: build, run, diff. Returns plain data (msgpack-able)."""
    started = time.monotonic()
    here = where()
    folder = Path(tempfile.mkdtemp(prefix="coder-ls-step-"))
    try:
        repo = build_repo(folder, bundle, base, diff)
        setup = time.monotonic() - started
        code = run_exec(repo, prompt, permissions, folder / "transcript.jsonl")
        transcript = (folder / "transcript.jsonl").read_text("utf-8", errors="replace")
        stderr = (folder / "stderr.txt").read_text("utf-8", errors="replace")[-4000:]
        head = json.dumps({"type": "ranOn", "where": here, "pid": os.getpid(), "setupSeconds": round(setup, 3)})
        return {
            "where": here,
            "exitCode": code,
            "patch": step_patch(repo),
            "transcript": head + "\n" + transcript,
            "stderr": stderr,
            "seconds": time.monotonic() - started,
        }
    finally:
        shutil.rmtree(folder, ignore_errors=True)
