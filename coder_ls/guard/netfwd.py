"""The sandbox's end of the network proxy: a forwarder in front of the agent's shell.

Run inside the sandbox (its own network namespace) as a launcher, without `site` (only the
standard library), like `guard/landlock.py`:

    python -I -S netfwd.py --socket PATH --port N --token TOKEN -- ARGV...

It listens on 127.0.0.1:N (inside the sandbox: the sandbox's own loopback), forks a
forwarder that relays each connection to the server's proxy (`guard/netproxy.py`) on the
Unix socket PATH, opening each with TOKEN (the proxy tells sandboxes apart by it), then
execs ARGV (the agent's bash) with the listening port already bound. The forwarder holds
no descriptor of the shell's (stdin, stdout, the shell's marker pipe: a command never
waits on it), is a process group of its own (no job of the shell's: `wait`, an idle check
of the shell's group or a kill of it pass it by), dies when ARGV's process ends
(`PR_SET_PDEATHSIG`) and with the sandbox's PID namespace; killing it only cuts the
sandbox's own network.

The host side's half is here too, for `sandbox.wrap`: `proxy_args` (what bubblewrap
binds), `proxy_env` (the variables that point clients at the forwarder) and `argv_prefix`.
"""

from __future__ import annotations

import functools
import os
import socket
import sys
import threading
from typing import Protocol

PORT = 3128  # inside the sandbox's own network namespace: nothing else listens there
CHUNK = 256 * 1024
PR_SET_PDEATHSIG = 1


class Handle(Protocol):  # `netproxy.ProxyHandle`, without importing the server's side here
    @property
    def socket_path(self) -> str: ...

    token: str


# Where the proxy's socket is bound inside the sandbox: a short name (a Unix socket's path is
# at most 107 bytes, the server's run directory may be deeper), in the sandbox's own /tmp.
INSIDE = "/tmp/.coder-netproxy.sock"


def proxy_args(handle: Handle) -> list[str]:
    """bubblewrap arguments that make the proxy's socket reachable in the sandbox at `INSIDE`
    (after the sandbox's /tmp is bound: a mount point there, which a command cannot remove)."""
    return ["--ro-bind", handle.socket_path, INSIDE]


def proxy_env(port: int = PORT) -> dict[str, str]:
    """The variables that send HTTP clients (curl, pip, npm, git, Python, Go, ...) through the
    forwarder; the sandbox's own loopback stays direct."""
    url = f"http://127.0.0.1:{port}"
    env = dict.fromkeys(("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"), url)
    env.update(dict.fromkeys(("npm_config_proxy", "npm_config_https_proxy", "PIP_PROXY"), url))
    env["NO_PROXY"] = env["no_proxy"] = "localhost,127.0.0.1"
    return env


def argv_prefix(handle: Handle, port: int = PORT) -> list[str]:
    """What goes before the shell's argv inside the sandbox (after bubblewrap's `--`). The
    sandbox has a /tmp of its own, which hides whatever lives under the host's /tmp (a
    checkout, a virtual environment): so the interpreter is the real one behind a venv's
    link, and this file is handed to it as its source (`-c`), not by its path."""
    return [os.path.realpath(sys.executable), "-I", "-S", "-c", _source(), "--socket", INSIDE,
            "--port", str(port), "--token", handle.token, "--"]  # fmt: skip


@functools.cache
def _source() -> str:
    with open(__file__, encoding="utf-8") as f:  # this module: the standard library only
        return f.read()


def with_proxy(bwrap_argv: list[str], handle: Handle, port: int = PORT) -> list[str]:
    """`sandbox.wrap`'s bubblewrap argv with the proxy wired in: `proxy_args` last among
    bubblewrap's options (after `--unshare-net`), `argv_prefix` first after its `--`."""
    end = bwrap_argv.index("--")
    return [*bwrap_argv[:end], *proxy_args(handle), "--", *argv_prefix(handle, port), *bwrap_argv[end + 1 :]]


# -- inside the sandbox -------------------------------------------------------------------------
def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(CHUNK):
            dst.sendall(data)
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _relay(client: socket.socket, path: str, token: bytes) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
        upstream.sendall(token + b"\n")
        back = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
        back.start()
        _pipe(client, upstream)
        back.join()
    except OSError:
        pass
    finally:
        client.close()
        upstream.close()


def _die_with_parent(parent: int) -> None:
    try:
        import ctypes

        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent ended before the signal was set up
        os._exit(0)


def _forward(listener: socket.socket, path: str, token: bytes, parent: int) -> None:
    """The forwarder (the forked child): never returns."""
    try:
        _die_with_parent(parent)
        os.setpgid(0, 0)  # no job of the shell's: a `wait`, an idle check or a group kill passes it by
        if listener.fileno() < 3:  # a standard descriptor was closed: keep clear of them
            import fcntl

            listener = socket.socket(fileno=fcntl.fcntl(listener.fileno(), fcntl.F_DUPFD, 3))
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.closerange(3, listener.fileno())
        os.closerange(listener.fileno() + 1, 65536)
        while True:
            client, _ = listener.accept()
            threading.Thread(target=_relay, args=(client, path, token), daemon=True).start()
    finally:
        os._exit(0)


def main(argv: list[str]) -> int:
    opts: dict[str, str] = {}
    i = 0
    while i < len(argv) and argv[i] != "--":
        if argv[i] in ("--socket", "--port", "--token") and i + 1 < len(argv):
            opts[argv[i]] = argv[i + 1]
            i += 2
        else:
            print(f"netfwd: unknown argument {argv[i]!r}", file=sys.stderr)
            return 2
    command = argv[i + 1 :]
    if not command or set(opts) != {"--socket", "--port", "--token"} or not opts["--port"].isdigit():
        print("netfwd: usage: netfwd.py --socket PATH --port N --token TOKEN -- ARGV...", file=sys.stderr)
        return 2
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", int(opts["--port"])))
        listener.listen(128)
    except OSError as exc:
        print(
            f"netfwd: cannot listen on 127.0.0.1:{opts['--port']}: {exc.strerror}; the command was not run",
            file=sys.stderr,
        )
        return 126
    parent = os.getpid()
    if os.fork() == 0:
        _forward(listener, opts["--socket"], opts["--token"].encode(), parent)
    listener.close()
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"netfwd: {command[0]}: {exc.strerror}", file=sys.stderr)
        return 127
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
