"""The parts of the Ray executor that need no cluster, on real git: the snapshot a worker
gets (committed base + staged, unstaged and untracked changes, the user's index untouched),
the worker's rebuild of it and the patch it hands back, the runtime-env guard that keeps a
secret out of what Ray logs (tried from several sides), and the message when `ray` is not
installed."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from harness import init_git

from coder_ls.agent.remotestep import read_transcript
from coder_ls.protocol.config import RayExecutor
from coder_ls.remote import snapshot, worker
from coder_ls.remote.rayexec import INSTALL_HINT, RemoteError, runtime_env

KEY = "sk-ant-the-servers-own-key-0123456789"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True,
                          stdin=subprocess.DEVNULL).stdout  # fmt: skip


def test_the_worker_rebuilds_the_workspace_with_its_uncommitted_changes_and_hands_back_its_patch(tmp_path):
    root = init_git(tmp_path / "ws", {"app.py": "v1\n", "lib.py": "keep\n", "gone.py": "bye\n"})
    (root / "app.py").write_text("v2 staged\n")
    git(root, "add", "app.py")
    (root / "lib.py").write_text("keep, unstaged\n")
    (root / "gone.py").unlink()
    (root / "new.bin").write_bytes(bytes(range(256)))  # untracked, binary
    (root / "ignored.log").write_text("not sent\n")
    (root / ".gitignore").write_text("*.log\n")
    status, staged = git(root, "status", "--porcelain"), git(root, "diff", "--cached")
    snap = asyncio.run(snapshot.take(root))
    assert git(root, "status", "--porcelain") == status and git(root, "diff", "--cached") == staged  # index untouched
    assert snap.base == git(root, "rev-parse", "HEAD").strip()
    repo = worker.build_repo(tmp_path, snap.bundle, snap.base, snap.diff)
    assert (repo / "app.py").read_text() == "v2 staged\n" and (repo / "lib.py").read_text() == "keep, unstaged\n"
    assert not (repo / "gone.py").exists() and (repo / "new.bin").read_bytes() == bytes(range(256))
    assert not (repo / "ignored.log").exists()
    assert worker.step_patch(repo) == b""  # nothing changed yet on the worker
    (repo / "app.py").write_text("v3 by the step\n")
    (repo / ".coder").mkdir(exist_ok=True)
    (repo / ".coder" / ".gitignore").write_text("/*\n")  # the step's own state stays out
    (repo / ".coder" / "sessions.jsonl").write_text("{}\n")
    patch = worker.step_patch(repo).decode()
    assert patch.startswith("diff --git a/app.py b/app.py") and "+v3 by the step" in patch and ".coder" not in patch
    assert "index " in patch and len(patch.split("index ")[1].split("..")[0]) == 40  # --full-index


def test_a_diff_that_does_not_apply_on_the_worker_is_a_clear_failure(tmp_path):
    root = init_git(tmp_path / "ws", {"app.py": "v1\n"})
    snap = asyncio.run(snapshot.take(root))
    bad = b"diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-not there\n+x\n"
    with pytest.raises(worker.StepFailed, match="git apply failed"):
        worker.build_repo(tmp_path, snap.bundle, snap.base, bad)


def test_a_folder_without_a_commit_cannot_be_sent(tmp_path):
    (tmp_path / "ws").mkdir()
    git(tmp_path / "ws", "init", "-q")
    with pytest.raises(snapshot.SnapshotError, match="at least one commit"):
        asyncio.run(snapshot.take(tmp_path / "ws"))


def executor(env_vars: dict) -> RayExecutor:
    return RayExecutor(address="127.0.0.1:1", runtime_env={"env_vars": env_vars, "pip": ["x"]})


def test_the_runtime_env_may_name_the_key_by_reference_only():
    env = {"ANTHROPIC_API_KEY": KEY}
    ok = runtime_env(executor({"ANTHROPIC_API_KEY": "${NODE_KEY}", "ANTHROPIC_BASE_URL": "http://x"}), env)
    assert ok == {"env_vars": {"ANTHROPIC_API_KEY": "${NODE_KEY}", "ANTHROPIC_BASE_URL": "http://x"}, "pip": ["x"]}
    attempts = [
        {"ANTHROPIC_API_KEY": "sk-ant-literal-value-123456"},  # a literal under the key's name
        {"ANTHROPIC_API_KEY": "${NODE_KEY}x"},  # not only a reference
        {"SOME_NAME": KEY},  # the server's key under another name
        {"SOME_NAME": f"Bearer {KEY}"},  # inside a longer value
        {"RAY_AUTH_TOKEN": "literal-token-value"},  # the cluster's token is a secret too
    ]
    for env_vars in attempts:
        with pytest.raises(RemoteError, match="Ray logs the values"):
            runtime_env(executor(env_vars), env)
    # a name the user declared secret (secrets.envNames) is held to the same rule
    with pytest.raises(RemoteError, match="must be a reference"):
        runtime_env(executor({"MY_GATEWAY_TOKEN": "abcdefgh12345"}), env, ("MY_GATEWAY_TOKEN",))
    with pytest.raises(RemoteError, match="map names to strings"):
        runtime_env(RayExecutor(address="a", runtime_env={"env_vars": {"N": 1}}), env)


def test_without_ray_installed_a_step_says_how_to_get_it():
    code = (
        "import sys, asyncio; sys.modules['ray'] = None\n"
        "from coder_ls.protocol.config import RayExecutor\n"
        "from coder_ls.remote.rayexec import RayRunner, RemoteError\n"
        "try:\n    asyncio.run(RayRunner(RayExecutor(address='127.0.0.1:1')).connect())\n"
        "except RemoteError as exc:\n    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                         timeout=60)  # fmt: skip
    assert out.stdout.strip() == INSTALL_HINT, (out.stdout, out.stderr)


def test_the_transcript_gives_the_last_answer_the_tokens_and_the_error():
    text = "\n".join([
        '{"type": "ranOn", "where": "ray:10.0.0.2/abc"}',
        '{"type": "assistantMessage", "text": "first"}',
        '{"type": "assistantMessage", "text": "a subagent\'s", "agentId": "explore-1"}',
        '{"type": "contextUsage", "usedTokens": 120}',
        '{"type": "assistantMessage", "text": "final"}',
        '{"type": "error", "message": "overloaded"}',
        "not json",
    ])  # fmt: skip
    assert read_transcript(text) == ("final", 120, "overloaded")
