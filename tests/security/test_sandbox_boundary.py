"""Nothing the sandboxed agent writes runs later outside the sandbox (issue 16), on both
backends: the paths the server, git or the editor later execute or trust cannot be written
or created (`.git/` whole, `.claude/`, `.mcp.json`, `.envrc`, ...), git's own writes are
asked about instead of failing silently, the user's shell state is out of reach, UDP does
not leave the sandbox, and SIGTERM to the server ends every job it started.
A real LSP client drives the real server; the real SDK talks to the scripted endpoint."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "e2e_agent"))

from agent_e2e import APP, api_env, calls, tool_call
from anthropic_server import FakeAnthropicServer, reply
from harness import Session, init_git, lsp_session, server_process
from lsprotocol import types

from coder_ls.guard import sandbox
from coder_ls.guard.landlock import abi
from security.test_processes_e2e import _gone, _sleepers
from security.test_sandbox_e2e import agent_runs

pytestmark = pytest.mark.filterwarnings("ignore:Unknown progress token")

BACKENDS = [
    pytest.param("bwrap", marks=pytest.mark.skipif(sandbox.bwrap_path() is None, reason="no working bubblewrap")),
    pytest.param("landlock", marks=pytest.mark.skipif(abi() < 1, reason="this kernel has no Landlock")),
]


@contextlib.asynccontextmanager
async def server(
    root: Path, fake: FakeAnthropicServer, backend: str, settings: dict[str, Any] | None = None
) -> AsyncIterator[Session]:
    env = {**api_env(fake), "CODER_SANDBOX_BACKEND": backend}
    async with lsp_session(root, env={**env, "XDG_RUNTIME_DIR": ""}) as s:
        s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"coder": {"permissions": "yolo", **(settings or {})}})
        )
        yield s


def _snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file of the workspace with its bytes (not the server's own state in .coder)."""
    out: dict[str, bytes | None] = {}
    for base, dirs, files in os.walk(root):
        if Path(base) == root and ".coder" in dirs:
            dirs.remove(".coder")
        for name in files:
            p = Path(base, name)
            out[p.relative_to(root).as_posix()] = p.read_bytes() if not p.is_symlink() else None
    return out


PLANTS = {
    # git reads `.git/commondir` as where its config lives: a copied git dir with fsmonitor
    ".git/commondir": "cp -r .git /var/tmp/ignored 2>/dev/null; mkdir -p src/g && cp .git/HEAD src/g/ && "
    "mkdir -p src/g/objects src/g/refs && printf '[core]\\n\\tfsmonitor = touch PWNED_FSMON\\n' > src/g/config && "
    "echo ../src/g > .git/commondir",
    ".git/info/attributes": "mkdir -p .git/info; echo '* filter=x' > .git/info/attributes",
    ".claude/commands/review.md": "mkdir -p .claude/commands && printf '!touch PWNED_REVIEW\\n' "
    "> .claude/commands/review.md",
    ".mcp.json": 'echo \'{"mcpServers": {"x": {"command": "touch", "args": ["PWNED_MCP"]}}}\' > .mcp.json',
    ".envrc": "echo 'touch PWNED_ENVRC' > .envrc",
    ".vscode/tasks.json": "mkdir -p .vscode && echo '{}' > .vscode/tasks.json",
    ".nvim.lua": "echo 'os.execute(\"touch PWNED_NVIM\")' > .nvim.lua",
    ".devcontainer/devcontainer.json": "mkdir -p .devcontainer && echo '{}' > .devcontainer/devcontainer.json",
    ".pre-commit-config.yaml": "echo 'repos: []' > .pre-commit-config.yaml",
    ".gitmodules": "printf '[submodule \"s\"]\\n\\tpath = src\\n' > .gitmodules",
    # the same through a hardlink out of .git, and through a protected name linked into src/
    "hardlink": "ln .git/config src/cfg && printf '[core]\\n\\tfsmonitor = touch PWNED_LINK\\n' >> src/cfg",
    ".idea -> cfg/idea": "echo '<run/>' > cfg/idea/workspace.xml; echo '<run/>' > .idea/workspace.xml",
}


@pytest.mark.parametrize("backend", BACKENDS)
async def test_paths_run_or_trusted_later_cannot_be_written_or_created(tmp_path, fake, backend):
    root = init_git(tmp_path / "ws", {"app.py": APP, "src/lib.py": "x = 1\n"})
    (root / ".vscode").mkdir()
    (root / ".vscode" / "settings.json").write_text("{}\n")
    (root / "cfg" / "idea").mkdir(parents=True)
    (root / ".idea").symlink_to("cfg/idea")
    before = _snapshot(root)
    async with server(root, fake, backend) as s:
        s.answer_question = lambda p: None  # never approve a rerun outside
        outs = await agent_runs(
            s,
            fake,
            *PLANTS.values(),
            "echo '{\"x\": 1}' > .vscode/settings.json; mv .vscode .vscode-old",
            "echo ok > src/made.txt && echo wrote-inside",
        )
    after = _snapshot(root)
    planted = {k: v for k, v in after.items() if k not in before and not k.startswith("src/")}
    assert planted == {}, planted
    changed = [k for k in before if after.get(k) != before[k]]
    assert changed == [], changed
    assert not (root / ".vscode-old").exists()
    assert not (root / "cfg" / "idea" / "workspace.xml").exists() and not (root / "src" / "cfg").exists()
    assert "wrote-inside" in outs[-1] and (root / "src" / "made.txt").read_text() == "ok\n"
    assert not list(root.glob("PWNED*"))
    # git on the planted commondir (had it been written) would have run the fsmonitor
    _git(root, "status")
    assert not list(root.glob("PWNED*"))


async def test_the_file_tools_ask_before_writing_a_protected_path_in_every_preset(tmp_path, fake):
    """The agent's write tool is not sandboxed: in yolo, with an allow-all rule, writing
    `.mcp.json` or `.claude/commands/review.md` is still asked, and a denial writes nothing."""
    root = init_git(tmp_path / "ws", {"app.py": APP})
    rules = [{"tool": "*", "action": "allow"}]
    async with server(root, fake, "none", {"rules": rules}) as s:
        fake.push(
            calls(
                tool_call("write", {"path": ".mcp.json", "content": '{"mcpServers": {}}'}, "toolu_w1"),
                tool_call("write", {"path": ".claude/commands/review.md", "content": "!touch PWNED"}, "toolu_w2"),
                tool_call("write", {"path": "notes.md", "content": "fine"}, "toolu_w3"),
            ),
            reply("done"),
        )
        result = await s.execute("coder.input", {"text": "go"})
        assert result["status"] == "completed", result
        asked = [q.message for q in s.questions]
    assert len(asked) == 2 and ".mcp.json" in asked[0] and "MCP servers" in asked[0], asked
    assert "Claude Code" in asked[1], asked
    assert not (root / ".mcp.json").exists() and not (root / ".claude").exists()
    assert (root / "notes.md").read_text() == "fine"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_git_writes_run_in_the_git_lane_or_are_asked_to_run_outside(tmp_path, fake, backend):
    """`.git` is read-only to the agent's shell. Under bubblewrap its `git commit` runs in
    the git lane (a one-shot sandbox where `.git` is writable but what git runs or trusts):
    no question. Under Landlock (no lane) it fails on the sandbox, and the user is asked to
    run it outside, where it works when approved."""
    root = init_git(tmp_path / "ws", {"app.py": APP})
    (root / "app.py").write_text(APP + "\n# more\n")
    commit = "git add app.py && git -c user.name=a -c user.email=a@b commit -qm agent-commit"
    async with server(root, fake, backend) as s:
        s.answer_question = lambda p: None
        (denied,) = await agent_runs(s, fake, commit)
        if backend == "bwrap":
            assert s.questions == [] and "exit code: 0" in denied, denied
            assert _git(root, "log", "--format=%s").splitlines()[0] == "agent-commit"
            return
        assert len(s.questions) == 1 and commit in s.questions[0].message
        assert "did not approve" in denied, denied
        assert ".git, " in denied and "read-only" in denied, denied  # the model is told why
        assert "agent-commit" not in _git(root, "log", "--format=%s")
        s.answer_question = lambda p: "Run outside the sandbox"
        (approved,) = await agent_runs(s, fake, commit)
        assert "approved running it again outside" in approved, approved
    assert _git(root, "log", "--format=%s").splitlines()[0] == "agent-commit"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_background_job_cannot_reach_the_users_shell_state(tmp_path, fake, backend):
    """With XDG_RUNTIME_DIR unset, nothing the user's shell later runs may be where the
    sandbox can write: a job that appends code to every state-like file it finds changes
    nothing."""
    root = init_git(tmp_path / "ws", {"app.py": APP})
    attack = (
        "c=$(tr '\\0' '\\n' < /proc/$$/cmdline | grep /cmd. | head -1); "
        'for d in /dev/shm /tmp "$TMPDIR/.." "$(dirname "$c")/.." "${XDG_STATE_HOME:-$HOME/.local/state}"; '
        "do find \"$d\" -maxdepth 5 \\( -name 'env.*' -o -name cwd \\) 2>/dev/null; done | sort -u > $TMPDIR/found; "
        "(sleep 0.5; while read -r f; do echo 'touch PWNED_STATE' >> \"$f\"; done < $TMPDIR/found) & "
        "wc -l < $TMPDIR/found"
    )
    async with server(root, fake, backend) as s:
        s.answer_question = lambda p: None
        mine = await s.execute("coder.shell", {"command": "export MINE=1"})
        assert mine["status"] == "completed"
        (out,) = await agent_runs(s, fake, attack)
        await asyncio.sleep(1.5)
        again = await s.execute("coder.shell", {"command": "echo $MINE; true"})
        pid = server_process(s).pid
        assert not _in_shm(pid), "the shell state is in /dev/shm, which the sandbox can reach"
    assert "1" in again["reply"]
    # the attack ran; whatever it found and appended to (the shells keep no state files since
    # they became long-lived processes; other processes' files under a shared /tmp), the
    # user's shell took nothing from it
    assert out.split()[0].isdigit(), out
    assert not (root / "PWNED_STATE").exists(), out


def _in_shm(pid: int) -> bool:
    return os.path.exists(f"/dev/shm/coder-ls-{os.getuid()}-{pid}")


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, stdin=subprocess.DEVNULL, check=True
    )
    return done.stdout


class UdpSink:
    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]

    def received(self) -> list[bytes]:
        got = []
        with contextlib.suppress(OSError):
            while True:
                got.append(self.sock.recv(100))
        return got


@pytest.mark.parametrize("backend", BACKENDS)
async def test_udp_does_not_reach_the_hosts_loopback(tmp_path, fake, backend):
    root = init_git(tmp_path / "ws", {"app.py": APP})
    sink = UdpSink()
    send = (
        f"import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
        f"s.sendto(b'leak', ('127.0.0.1', {sink.port})); print('SENT')"
    )
    send6 = "import socket; socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); print('SOCKET6')"
    try:
        async with server(root, fake, backend) as s:
            s.answer_question = lambda p: None
            out, out6 = await agent_runs(s, fake, f'python3 -c "{send}"', f'python3 -c "{send6}"')
        assert sink.received() == [], out
        if backend == "landlock":  # no socket at all, and a message the rerun question understands
            assert "SENT" not in out and "Permission denied" in out, out
            assert "SOCKET6" not in out6, out6
        async with server(root, fake, backend, {"sandbox": {"network": True}}) as s:
            (allowed,) = await agent_runs(s, fake, f'python3 -c "{send}"')
        assert "SENT" in allowed and sink.received() == [b"leak"]
    finally:
        sink.sock.close()


@pytest.fixture
def cleanup():
    markers: list[str] = []
    yield markers
    for m in markers:
        for pid in _sleepers(m):
            os.kill(pid, 9)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
async def test_a_signal_to_the_server_ends_every_job_it_started(tmp_path, fake, cleanup, sig):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    base = random.randint(100000, 900000)
    markers = {
        f"{base}.1": f"nohup sleep {base}.1 >/dev/null 2>&1 &",
        f"{base}.2": f"setsid sleep {base}.2 >/dev/null 2>&1 &",
        f"{base}.3": f"setsid -f sh -c 'sleep {base}.3 >/dev/null 2>&1 &'",
    }
    cleanup.extend([*markers, f"{base}.4"])
    async with server(root, fake, "bwrap" if sandbox.bwrap_path() else "landlock") as s:
        for command in markers.values():
            assert (await s.execute("coder.shell", {"command": command}))["status"] == "completed"
        await agent_runs(s, fake, f"setsid nohup sleep {base}.4 >/dev/null 2>&1 &")
        for m in markers:
            for _ in range(100):
                if _sleepers(m):
                    break
                await asyncio.sleep(0.02)
            assert _sleepers(m), f"{m} did not start"
        proc = server_process(s)
        proc.send_signal(sig)
        await asyncio.wait_for(proc.wait(), 15)
        assert await _gone(cleanup) == []
