"""The agent's shell runs in the OS sandbox: an attacker-minded model tries to write outside
the workspace, into `.git/hooks`, `.git/config` and `.coder/`, and to reach the network.
A real LSP client drives the real server; the real SDK talks to the scripted endpoint."""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "e2e_agent"))

from agent_e2e import APP, api_env, calls, result_text, tool_call, tool_results
from anthropic_server import FakeAnthropicServer, reply
from harness import Session, init_git, lsp_session
from lsprotocol import types

from coder_ls.guard import sandbox

pytestmark = [
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
    pytest.mark.skipif(sandbox.bwrap_path() is None, reason="bubblewrap does not work on this machine"),
]


@contextlib.asynccontextmanager
async def server(root: Path, fake: FakeAnthropicServer, settings: dict[str, Any]) -> AsyncIterator[Session]:
    async with lsp_session(root, env=api_env(fake)) as s:
        s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"coder": {"permissions": "yolo", **settings}})
        )
        yield s


async def agent_runs(s: Session, fake: FakeAnthropicServer, *commands: str) -> list[str]:
    """One turn in which the model runs `commands` with bash, one per step; their outputs."""
    fake.requests.clear()
    ids = [f"toolu_sb{i}" for i in range(len(commands))]
    fake.push(*[calls(tool_call("bash", {"command": c}, i)) for c, i in zip(commands, ids, strict=True)])
    fake.push(reply("done"))
    result = await s.execute("coder.input", {"text": "go"})
    assert result["status"] == "completed", result
    last = fake.message_requests[-1]
    return [result_text(tool_results(last)[i]) for i in ids]


def _exists(path: str) -> bool:
    return os.path.exists(path)


async def test_writes_outside_the_workspace_and_to_protected_paths_fail(tmp_path, fake, outside):
    root = init_git(tmp_path / "ws", {"app.py": APP, "src/lib.py": "x = 1\n"})
    (root / ".coder").mkdir(exist_ok=True)
    (root / ".coder" / "config.json").write_text('{"permissions": "strict"}\n')
    scratch = f"/tmp/coder-sbx-scratch-{tmp_path.name}"
    victim = outside / "victim.txt"
    victim.write_text("original\n")
    git_config = (root / ".git" / "config").read_text()
    hooks = sorted(p.name for p in (root / ".git" / "hooks").iterdir())
    async with server(root, fake, {}) as s:
        outs = await agent_runs(
            s,
            fake,
            f"echo pwned > {victim}; echo pwned > {outside}/new.txt",
            "printf '#!/bin/sh\\necho hook\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit",
            "printf '[core]\\n\\tfsmonitor = touch /var/tmp/x\\n' >> .git/config",
            "git config core.fsmonitor 'touch /var/tmp/x'",
            'echo \'{"permissions": "yolo"}\' > .coder/config.json',
            "mv .coder .coder-old; mkdir .coder; echo '{}' > .coder/config.json",
            "rm -rf .git/hooks; mkdir -p .git/hooks; echo evil > .git/hooks/post-checkout",
            "mv .git .git-old && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit",
            "echo fine > src/inside.txt && echo wrote-inside",
            f"echo tmp > {scratch} && cat {scratch}",
            # the server may run as root: a sandboxed root must not remount its way out
            "mount -o remount,rw,bind .git/hooks; echo evil > .git/hooks/pre-push",
            f"mount -o remount,rw /; mount -o remount,rw,bind {outside}; echo pwned > {outside}/remount.txt",
        )
        assert s.questions, "a failure on the sandbox asks before re-running outside"
    assert victim.read_text() == "original\n" and not (outside / "new.txt").exists()
    assert not (outside / "remount.txt").exists()
    assert (root / ".git" / "config").read_text() == git_config
    assert sorted(p.name for p in (root / ".git" / "hooks").iterdir()) == hooks
    assert (root / ".coder" / "config.json").read_text() == '{"permissions": "strict"}\n'
    assert not (root / ".coder-old").exists() and not (root / ".git-old").exists()
    assert "Read-only file system" in outs[0]
    assert "wrote-inside" in outs[8] and (root / "src" / "inside.txt").read_text() == "fine\n"
    assert outs[9].startswith("tmp") and not _exists(scratch)  # a private /tmp
    assert not _exists("/var/tmp/x")


class Listener:
    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()


async def test_network_is_cut_unless_allowed(tmp_path, fake):
    root = init_git(tmp_path / "ws", {"app.py": APP})
    listener = Listener()
    connect = f"import socket; socket.create_connection(('127.0.0.1', {listener.port}), 5); print('CONNECTED')"
    probe = f'python3 -c "{connect}"'
    try:
        async with server(root, fake, {}) as s:
            (blocked,) = await agent_runs(s, fake, probe)
        assert "CONNECTED" not in blocked and listener.accepted == 0
        async with server(root, fake, {"sandbox": {"network": True}}) as s:
            (allowed,) = await agent_runs(s, fake, probe)
        assert "CONNECTED" in allowed and listener.accepted == 1
    finally:
        listener.sock.close()


async def test_cwd_and_exports_carry_over_between_bash_calls_not_into_the_users_shell(tmp_path, fake):
    root = init_git(tmp_path / "ws", {"app.py": APP})  # `sub` is made by the sandboxed command
    async with server(root, fake, {}) as s:
        first, second = await agent_runs(
            s, fake, "mkdir -p sub/deeper && cd sub && export SB_VAR=kept", 'cd deeper; echo "$SB_VAR in $PWD"'
        )
        assert "exit code: 0" in first
        assert f"kept in {root}/sub/deeper" in second
        mine = await s.execute("coder.shell", {"command": 'echo "${SB_VAR-unset} at $PWD"; true'})
        assert f"unset at {root}\n" in mine["reply"], mine  # the user's shell is another one
        assert "Read-only" not in mine["reply"]


@pytest.mark.parametrize("answer", ["Run outside the sandbox", None])
async def test_rerun_outside_only_after_the_user_approves(tmp_path, fake, outside, answer):
    root = init_git(tmp_path / "ws", {"app.py": APP})
    target = outside / "approved.txt"
    async with server(root, fake, {}) as s:
        s.answer_question = lambda p: answer
        (out,) = await agent_runs(s, fake, f"echo made > {target}")
        (question,) = s.questions
        assert f"echo made > {target}" in question.message
    assert "Read-only file system" in out
    if answer:
        assert target.read_text() == "made\n"
        assert "approved running it again outside" in out
    else:
        assert not target.exists()
        assert "did not approve" in out


async def test_the_users_shell_never_runs_what_the_sandbox_left_in_its_state(tmp_path, fake):
    """Issue 16: the agent's shell and the user's share no environment and no state file:
    what a sandboxed command exports (even an ordinary variable) never reaches `!cmd`."""
    root = init_git(tmp_path / "ws", {"app.py": APP})
    async with server(root, fake, {}) as s:
        _, second = await agent_runs(
            s,
            fake,
            "export LD_PRELOAD=/tmp/evil.so GIT_SSH_COMMAND='touch PWNED_SSH' PROMPT_COMMAND='touch PWNED_PC' OK_VAR=1",
            'grep -l OK_VAR -r /tmp /dev/shm "${XDG_RUNTIME_DIR:-/nonexistent}" 2>/dev/null; echo searched',
        )
        assert "searched" in second and "env." not in second  # no state file to forge
        mine = await s.execute(
            "coder.shell", {"command": "env | grep -E '^(LD_PRELOAD|GIT_SSH_COMMAND|PROMPT_COMMAND|OK_VAR)='"}
        )
    for name in ("OK_VAR", "LD_PRELOAD", "GIT_SSH_COMMAND", "PROMPT_COMMAND"):
        assert name not in mine["reply"], mine
    assert not (root / "PWNED_SSH").exists() and not (root / "PWNED_PC").exists()
