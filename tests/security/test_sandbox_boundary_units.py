"""The walls of issue 16 below the end-to-end tests: the one protected list as the file
tools' policy and the sandbox's grants see it, the Landlock launcher's network filter, and
where the shells' state goes."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from coder_ls.agent.policy import Grant, SessionGrants, decide
from coder_ls.guard import landlock, lifetime, pins, protected, sandbox
from coder_ls.protocol.config import Config, Rule


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    for d in ("src/deep", ".git/hooks", ".claude", "sub"):
        (ws / d).mkdir(parents=True)
    for f in ("README.md", ".git/config", "src/a.py", ".envrc"):
        (ws / f).write_text("x\n")
    return ws


@pytest.mark.parametrize(
    "path",
    [".mcp.json", ".envrc", "sub/.envrc", ".claude/commands/review.md", ".vscode/tasks.json", ".git/commondir",
     "sub/.git", ".devcontainer/devcontainer.json", ".nvim.lua", ".husky/pre-commit", "src/../.idea/x.xml"],
)  # fmt: skip
def test_file_tools_always_ask_about_every_protected_name(path, root):
    rules = [Rule(tool="*", action="allow"), Rule(tool="write", action="allow", path="**")]
    allow_all = Config(permissions="yolo", rules=rules)
    grants = SessionGrants([Grant("write", path="**"), Grant("write")])
    decision = decide("write", {"path": path}, allow_all, grants, root=root)
    assert decision.action == "ask", (path, decision)
    name = protected.protected_name(Path(os.path.normpath(path)).parts)
    assert name is not None and protected.PROTECTED[name] in decision.reason


def test_a_link_to_a_protected_path_is_asked_about_and_an_ordinary_path_is_not(root):
    (root / "src" / "cfg").symlink_to(root / ".claude")
    yolo = Config(permissions="yolo")
    assert decide("write", {"path": "src/cfg/settings.json"}, yolo, None, root=root).action == "ask"
    assert decide("write", {"path": "src/envrc.md"}, yolo, None, root=root).action == "allow"


def _box(root: Path, tmp: Path, mode: str = "workspace-write", writable: tuple[str, ...] = ()) -> sandbox.Sandbox:
    return sandbox.Sandbox(str(root), mode, False, writable, str(tmp / "t"), str(tmp / "c"), "landlock")


def test_grants_leave_out_protected_names_existing_or_not_and_links(root, tmp_path):
    (root / "docs").symlink_to(root / "src")
    (root / ".vscode").symlink_to(root / "src" / "deep")  # a protected name linked into the workspace
    dirs, files = sandbox.landlock_grants(_box(root, tmp_path))
    granted = {Path(p).relative_to(root).as_posix() for p in (*dirs, *files) if Path(p).is_relative_to(root)}
    # Landlock cannot take a sub-path back out of a granted one: the root itself is not granted,
    # so nothing can be created at its top (.mcp.json, .envrc); bubblewrap: test_sandbox_pins.py
    assert granted == {"README.md", "sub", "src/a.py"}, granted
    assert sandbox.writable(_box(root, tmp_path, mode="read-only")) == []


def test_a_writable_root_holding_the_workspace_and_the_server_state_is_split(root, tmp_path, monkeypatch):
    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    monkeypatch.setenv("XDG_RUNTIME_DIR", "")
    private = sandbox.server_dirs()
    assert str(state / "coder" / "run") in private
    box = sandbox.Sandbox(
        str(root), "workspace-write", False, (str(tmp_path),), str(tmp_path / "t"), str(tmp_path / "c"), "bwrap",
        private=private,
    )  # fmt: skip
    dirs, files = sandbox.landlock_grants(box)
    for p in (*dirs, *files):
        assert not Path(p).is_relative_to(state), p
        assert not Path(p).is_relative_to(root / ".git") and not Path(p).is_relative_to(root / ".claude"), p
        assert Path(p) not in (tmp_path, root), p
    if sandbox.bwrap_path():  # bubblewrap, split (no watcher) and whole (pins, placeholders): the same walls
        (tmp_path / "t").mkdir()
        (tmp_path / "c").mkdir()
        for holder in (None, pins.Placeholders(tmp_path / "placeholders.json")):
            writes = (
                f"echo x > {state}/coder/PWNED; echo x > {root}/.git/PWNED; mkdir {root}/.claude/commands; "
                f"echo x > {root}/.mcp.json; echo x > {root}/sub/ok.txt && echo wrote-sub; "
                f"echo x > {tmp_path}/beside.txt && echo wrote-beside; echo x > {root}/top.txt && echo wrote-top"
            )
            layout = sandbox.layout(box, holder)
            argv = sandbox.wrap(box, ["bash", "-c", writes], mounts=layout)
            done = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30)
            assert "wrote-sub" in done.stdout, done
            # the tops (the writable root's, the workspace's): writable whole only where pins are watched
            assert ("wrote-top" in done.stdout) == ("wrote-beside" in done.stdout) == (holder is not None), done
            assert not (state / "coder" / "PWNED").exists() and not (root / ".git" / "PWNED").exists()
            assert not (root / ".claude" / "commands").exists() and not (root / ".mcp.json").is_file()
            (root / "top.txt").unlink(missing_ok=True)
            if holder is not None:
                assert (root / ".mcp.json").is_dir()  # a placeholder, until given back
                holder.release(layout.placeholders)
                assert not (root / ".mcp.json").exists()


def _launch(*args: str, code: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-I", "-S", sandbox.LAUNCHER, "--write-file", "/dev/null", *args, "--", sys.executable]
    return subprocess.run([*cmd, "-c", code], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30)


PROBE = """
import socket
for fam, kind in ((2, 2), (10, 2), (2, 1), (10, 1), (17, 3), (1, 1), (16, 3)):
    try:
        socket.socket(fam, kind, 0 if fam != 16 else 0).close(); print(fam, kind, "ok")
    except OSError as e:
        print(fam, kind, e.errno)
"""


@pytest.mark.skipif(landlock.abi() < 1, reason="this kernel has no Landlock")
def test_the_launcher_allows_only_unix_and_netlink_sockets_with_the_network_off():
    cut = _launch("--no-network", code=PROBE)
    lines = dict(line.rsplit(" ", 1) for line in cut.stdout.splitlines())
    assert lines["1 1"] == "ok" and lines["16 3"] == "ok", cut  # Unix, netlink (getifaddrs)
    for key in ("2 2", "10 2", "2 1", "10 1", "17 3"):  # UDP, TCP (v4, v6), packet
        assert lines[key] == "13", (key, cut)  # EACCES: "Permission denied", a sandbox failure
    on = _launch(code=PROBE)
    assert dict(line.rsplit(" ", 1) for line in on.stdout.splitlines())["2 2"] == "ok", on


@pytest.mark.skipif(landlock.abi() < 1, reason="this kernel has no Landlock")
def test_the_network_filter_cannot_be_sidestepped_with_io_uring_or_a_udp_send():
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind(("127.0.0.1", 0))
    sink.settimeout(0.3)
    try:
        code = (
            "import ctypes, socket\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "print('uring', libc.syscall(425, 1, ctypes.create_string_buffer(120)), ctypes.get_errno())\n"
            f"socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', {sink.getsockname()[1]}))\n"
        )
        out = _launch("--no-network", code=code)
        assert "uring -1 1" in out.stdout, out  # EPERM
        assert "Permission denied" in out.stderr, out
        with pytest.raises(TimeoutError):
            sink.recv(10)
    finally:
        sink.close()


def test_the_state_dir_is_never_in_dev_shm_or_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    assert lifetime.run_parent() == tmp_path / "state" / "coder" / "run"
    assert stat.S_IMODE(os.stat(lifetime.run_parent()).st_mode) == 0o700
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(shared))  # not private: not used
    assert lifetime.run_parent() == tmp_path / "state" / "coder" / "run"
    monkeypatch.setenv("XDG_RUNTIME_DIR", "relative/dir")
    assert lifetime.run_parent() == tmp_path / "state" / "coder" / "run"
    own = tmp_path / "runtime"
    own.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(own))
    assert lifetime.run_parent() == own


def test_a_submodules_git_file_and_gitmodules_are_kept_out(root, tmp_path):
    (root / "libs" / "x" / "src").mkdir(parents=True)
    (root / "libs" / "x" / ".git").write_text("gitdir: ../../.git/modules/x\n")
    (root / "libs" / "y").mkdir()
    (root / ".gitmodules").write_text(
        '[submodule "x"]\n\tpath = libs/x\n[submodule "z"]\n\tpath = ../../etc\n[submodule "w"]\n\tpath = /etc\n'
    )
    dirs, files = sandbox.landlock_grants(_box(root, tmp_path))
    granted = {Path(p).relative_to(root).as_posix() for p in (*dirs, *files) if Path(p).is_relative_to(root)}
    assert {"libs/x/src", "libs/y"} <= granted and "libs/x/.git" not in granted and "libs" not in granted
    assert ".gitmodules" not in granted and not any(p.startswith("/etc") for p in (*dirs, *files))


def test_an_unusable_state_dir_falls_back_to_a_private_dir_the_sandbox_cannot_write(tmp_path, monkeypatch):
    """HOME's state dir unusable (issue 20): the server starts, and its run directories go to
    a private directory under the temp dir (never /dev/shm, which Landlock grants); a
    directory someone else planted there is refused, not used."""
    import os
    import tempfile

    blocker = tmp_path / "file"
    blocker.write_text("not a directory\n")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    lifetime.remove_stale_run_dirs()  # the server's start goes on
    run = lifetime.run_dir()
    base = tmp_path / "tmp" / f"coder-ls-{os.getuid()}"
    assert run.is_relative_to(base) and (os.stat(base).st_mode & 0o777) == 0o700
    assert not any(run.is_relative_to(d) for d in sandbox.WRITABLE_DEVICE_DIRS)
    os.chmod(base, 0o777)  # as if planted by another user: writable by others
    with pytest.raises(PermissionError):
        lifetime.run_dir()
