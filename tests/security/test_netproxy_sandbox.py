"""Network by domain through a real bubblewrap sandbox (`--unshare-net`): the forwarder
(`guard/netfwd.py`) in front of bash inside, the server's proxy (`guard/netproxy.py`) on
this test's event loop, a real HTTP server and a real TLS server on the host's 127.0.0.1.

The allowed name is `localhost` (the proxy resolves it on the host: 127.0.0.1), reached
with `NO_PROXY` cleared (the sandbox's own loopback is direct by default), or the machine's
host name where /etc/hosts maps it to a loopback address (then through the default
environment, as a registry's name would be). The refused names are never looked up: the
proxy refuses them by name, so no test sends anything beyond this machine.

Every attack is a sandboxed command: it must fail or be refused, and the allowed target
must not see it."""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import shlex
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from coder_ls.guard import netfwd, netproxy, sandbox
from coder_ls.protocol.config import NetworkDomains, SandboxConfig

pytestmark = pytest.mark.skipif(
    sandbox.bwrap_path() is None or shutil.which("curl") is None, reason="needs bubblewrap and curl"
)

PORT = netfwd.PORT
# the interpreter behind a venv's link: the sandbox's own /tmp hides a venv that lives under /tmp
PY = os.path.realpath(sys.executable)
CLEAR = "env NO_PROXY= no_proxy= "  # the allowed `localhost` goes through the proxy, not the sandbox's loopback
HOSTNAME = socket.gethostname()


def _loopback_name(name: str) -> bool:
    try:
        return all(info[4][0].startswith("127.") for info in socket.getaddrinfo(name, 80, type=socket.SOCK_STREAM))
    except OSError:
        return False


class _Target(http.server.BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_GET(self) -> None:
        _Target.seen.append(f"{self.requestline} Host={self.headers.get('Host')}")
        if self.path.startswith("/simple/demo"):
            body, kind = _INDEX.encode(), "text/html"
        elif self.path == "/demo":  # the npm registry's document of a package
            body, kind = json.dumps(_NPM_DOC).encode(), "application/json"
        elif self.path.endswith(".whl"):
            body, kind = _WHEEL.read_bytes(), "application/octet-stream"
        else:
            body, kind = f"target saw {self.requestline} Host={self.headers.get('Host')}\n".encode(), "text/plain"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


_INDEX = '<html><body><a href="/files/demo_pkg-1.0-py3-none-any.whl">demo_pkg-1.0-py3-none-any.whl</a></body></html>'
_NPM_DOC = {
    "name": "demo",
    "dist-tags": {"latest": "1.0.0"},
    "versions": {"1.0.0": {"name": "demo", "version": "1.0.0", "description": "served on the host's loopback"}},
}
_WHEEL = Path()


def _make_wheel(directory: Path) -> Path:
    import zipfile

    path = directory / "demo_pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("demo_pkg/__init__.py", "")
        z.writestr("demo_pkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n")
        z.writestr(
            "demo_pkg-1.0.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        z.writestr("demo_pkg-1.0.dist-info/RECORD", "")
    return path


@pytest.fixture(scope="module")
def targets() -> Iterator[tuple[int, int]]:
    """(plain HTTP port, TLS port) on the host's 127.0.0.1."""
    global _WHEEL
    work = Path(tempfile.mkdtemp(prefix="coder-netproxy-", dir="/var/tmp"))
    _WHEEL = _make_wheel(work)
    plain = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Target)
    tls = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Target)
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
         "-keyout", str(work / "k.pem"), "-out", str(work / "c.pem")],
        check=True, capture_output=True,
    )  # fmt: skip
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(work / "c.pem", work / "k.pem")
    tls.socket = context.wrap_socket(tls.socket, server_side=True)
    for server in (plain, tls):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield plain.server_address[1], tls.server_address[1]
    for server in (plain, tls):
        server.shutdown()
    shutil.rmtree(work, ignore_errors=True)


@pytest.fixture
async def proxy() -> Iterator[netproxy.NetProxy]:
    run = Path(tempfile.mkdtemp(prefix="coder-netproxy-run-", dir="/var/tmp"))
    p = netproxy.NetProxy(run)
    yield p
    await p.close()
    shutil.rmtree(run, ignore_errors=True)


RULES = NetworkDomains(allowed_domains=("localhost", HOSTNAME, "*.example.com"), denied_domains=("bad.example.com",))


async def sandboxed(
    tmp_path: Path, handle: netproxy.ProxyHandle | None, script: str, timeout: float = 60
) -> tuple[int, str]:
    """Run `script` with bash in a bubblewrap sandbox with domain rules (`handle`'s), wired
    as `netfwd.with_proxy` says; without a handle, the same sandbox with no proxy at all."""
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    rules = handle.rules if handle is not None else NetworkDomains(allowed_domains=("localhost",))
    box = sandbox.resolve(SandboxConfig(network=rules), root, tmp_path / "sbtmp")
    assert box is not None and box.backend == "bwrap" and not box.network
    argv = sandbox.wrap(box, ["bash", "--noprofile", "--norc", "-c", script])
    assert "--unshare-net" in argv
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(sandbox.forced_env(box))
    if handle is not None:
        argv = netfwd.with_proxy(argv, handle)
        env.update(netfwd.proxy_env())
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    assert proc.returncode is not None
    return proc.returncode, out.decode(errors="replace")


def py(code: str) -> str:
    """A python3 command line for bash (inside the sandbox)."""
    return f"{PY} -I -c {shlex.quote(code)}"


async def test_allowed_names_are_reached_through_the_proxy_plain_and_tls(tmp_path, proxy, targets):
    plain, tls = targets
    handle = proxy.open(RULES)
    _Target.seen.clear()
    code, out = await sandboxed(
        tmp_path,
        handle,
        f"{CLEAR} curl -sS http://localhost:{plain}/plain; "
        f"{CLEAR} curl -sS -k https://localhost:{tls}/over-tls; "
        + py(
            "import urllib.request,ssl;"
            f"print(urllib.request.urlopen('http://localhost:{plain}/urllib').read().decode())"
        ).replace(PY, f"{CLEAR} {PY}"),
    )
    assert code == 0, out
    assert f"target saw GET /plain HTTP/1.1 Host=localhost:{plain}" in out
    assert f"target saw GET /over-tls HTTP/1.1 Host=localhost:{tls}" in out  # TLS end to end: a CONNECT tunnel
    assert "target saw GET /urllib" in out
    assert handle.refused_since(0) == []


@pytest.mark.skipif(not _loopback_name(HOSTNAME), reason="the host name is not mapped to a loopback address here")
async def test_a_name_from_the_hosts_file_goes_through_the_default_environment(tmp_path, proxy, targets):
    plain, tls = targets
    handle = proxy.open(RULES)
    code, out = await sandboxed(
        tmp_path, handle, f"curl -sS http://{HOSTNAME}:{plain}/by-name && curl -sS -k https://{HOSTNAME}:{tls}/tls"
    )
    assert code == 0, out
    assert "target saw GET /by-name" in out and "target saw GET /tls" in out


async def test_a_refused_domain_is_named_in_the_output_and_recorded(tmp_path, proxy, targets):
    handle = proxy.open(RULES)
    mark = handle.mark()
    _, out = await sandboxed(
        tmp_path,
        handle,
        "curl -sS http://example.com/; echo; curl -sS -v https://other.org/ 2>&1 | grep -i '< HTTP'; "
        "curl -sS http://bad.example.com/; "
        + py(
            "import urllib.request\n"
            "try: urllib.request.urlopen('https://pypi.org/simple/')\n"
            "except Exception as e: print('urllib:', e)"
        ),
    )
    assert "coder-ls proxy: example.com is not allowed (sandbox.network)" in out  # the apex is no sub-domain
    assert "HTTP/1.1 403 coder-ls proxy: other.org is not allowed (sandbox.network)" in out
    assert "coder-ls proxy: bad.example.com is not allowed" in out  # deny wins over `*.example.com`
    assert "Tunnel connection failed: 403 coder-ls proxy: pypi.org is not allowed (sandbox.network)" in out
    assert handle.refused_since(mark) == ["example.com", "other.org", "bad.example.com", "pypi.org"]
    later = handle.mark()
    assert handle.refused_since(later) == []


async def test_nothing_is_reached_directly(tmp_path, proxy, targets):
    """No proxy variables, or a direct socket: the sandbox has only its own loopback."""
    plain, _ = targets
    handle = proxy.open(RULES)
    _Target.seen.clear()
    _, out = await sandboxed(
        tmp_path,
        handle,
        "unset HTTP_PROXY HTTPS_PROXY http_proxy https_proxy ALL_PROXY all_proxy; "
        f"curl -sS --max-time 5 http://localhost:{plain}/no-proxy-env; echo curl=$?; "
        f"curl -sS --max-time 5 --noproxy '*' http://{HOSTNAME}:{plain}/noproxy; echo curl=$?; "
        + py(
            "import socket\n"
            f"for host in ('127.0.0.1', '::1', '{HOSTNAME}'):\n"
            "    try:\n"
            f"        socket.create_connection((host, {plain}), timeout=5); print('CONNECTED', host)\n"
            "    except OSError as e: print('direct', host, type(e).__name__)"
        ),
    )
    assert "CONNECTED" not in out and "target saw" not in out, out
    assert out.count("curl=7") == 2, out  # "Couldn't connect to server"
    assert "direct 127.0.0.1 ConnectionRefusedError" in out
    assert _Target.seen == []


async def test_a_sandbox_without_the_proxy_cannot_use_its_socket(tmp_path, proxy, targets):
    """The socket is on the filesystem, which every sandbox sees: without the token the
    proxy answers nothing (a sandbox with the network off stays off)."""
    plain, _ = targets
    handle = proxy.open(RULES)
    _Target.seen.clear()
    request = f"CONNECT localhost:{plain} HTTP/1.1\\r\\n\\r\\nGET / HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n"
    _, out = await sandboxed(
        tmp_path,
        None,
        py(
            "import socket\n"
            f"for prefix in (b'', b'0' * 32 + b'\\n', b'{handle.token[:-1]}x\\n'):\n"
            "    s = socket.socket(socket.AF_UNIX); s.settimeout(40)\n"
            f"    s.connect({handle.socket_path!r}); s.sendall(prefix + b'{request}')\n"
            "    print('answer', repr(s.recv(100)))"
        ),
    )
    assert out.count("answer b''") == 3, out
    assert _Target.seen == []


L, E = "\r\n", "\r\n\r\n"
ATTACKS = {
    "CONNECT to an IP literal": (f"CONNECT 127.0.0.1:{{plain}} HTTP/1.1{L}Host: localhost{E}", "403", "127.0.0.1"),
    "CONNECT to an IPv6 literal": (f"CONNECT [::1]:{{plain}} HTTP/1.1{E}", "403", "::1"),
    "an IP in a form only inet_aton reads": (f"CONNECT 2130706433:{{plain}} HTTP/1.1{E}", "403", "127.0.0.1"),
    "an allowed name as a prefix": (f"CONNECT a.example.com.evil.net:443 HTTP/1.1{E}", "403", "a.example.com.evil.net"),
    "a name that ends like an allowed one": (f"CONNECT evilexample.com:443 HTTP/1.1{E}", "403", "evilexample.com"),
    "a refused CONNECT, an allowed Host": (
        f"CONNECT example.org:80 HTTP/1.1{L}Host: localhost{E}",
        "403",
        "example.org",
    ),
    "HTTP/1.0 without Host": (f"GET / HTTP/1.0{E}", "400", None),
    "origin form with an allowed Host": (f"GET /x HTTP/1.1{L}Host: localhost:{{plain}}{E}", "400", None),
    "a Host header naming another host": (
        f"GET http://localhost:{{plain}}/ HTTP/1.1{L}Host: example.org{E}",
        "400",
        None,
    ),
    "two Host headers": (
        f"GET http://localhost:{{plain}}/ HTTP/1.1{L}Host: localhost{L}Host: example.org{E}",
        "400",
        None,
    ),
    "a very long host": (f"GET http://{'a' * 300}.com/ HTTP/1.1{E}", "400", None),
    "a head past the limit": (f"CONNECT {'a' * 70000}:443 HTTP/1.1{E}", "431", None),
    "credentials in the URL": (f"GET http://user:pw@localhost:{{plain}}/ HTTP/1.1{E}", "400", None),
    "a header folded onto two lines": (
        f"GET http://localhost:{{plain}}/ HTTP/1.1{L}X: a{L} Host: x.org{E}",
        "400",
        None,
    ),
}


async def test_attacks_on_the_proxy_are_refused(tmp_path, proxy, targets):
    plain, _ = targets
    handle = proxy.open(RULES)
    _Target.seen.clear()
    requests = {name: text.format(plain=plain) for name, (text, _, _) in ATTACKS.items()}
    _, out = await sandboxed(
        tmp_path,
        handle,
        py(
            "import json, socket, sys\n"
            f"for name, text in json.loads(sys.argv[1]).items():\n"
            f"    s = socket.create_connection(('127.0.0.1', {PORT}), timeout=20)\n"
            "    s.sendall(text.encode())\n"
            "    print(json.dumps([name, s.recv(300).decode(errors='replace').split('\\r\\n')[0]]))"
        )
        + " "
        + shlex.quote(json.dumps(requests)),
    )
    answers = dict(json.loads(line) for line in out.splitlines() if line.startswith("["))
    for name, (_, status, domain) in ATTACKS.items():
        assert answers.get(name, "").startswith(f"HTTP/1.1 {status} coder-ls proxy:"), (name, answers.get(name), out)
        if domain is not None:
            assert f"{domain} is not allowed (sandbox.network)" in answers[name]
    assert _Target.seen == []  # none of them reached the allowed server either


async def test_what_a_tunnel_or_a_kept_connection_carries_goes_to_the_allowed_host_only(tmp_path, proxy, targets):
    """Inside an allowed CONNECT tunnel, an absolute-form request for a refused host, and a
    second request for a refused host on a plain connection, reach the allowed server (which
    answers for itself) or nothing: never the refused host."""
    plain, _ = targets
    handle = proxy.open(RULES)
    _Target.seen.clear()
    _, out = await sandboxed(
        tmp_path,
        handle,
        py(
            "import socket\n"
            f"s = socket.create_connection(('127.0.0.1', {PORT}), timeout=20)\n"
            f"s.sendall(b'CONNECT localhost:{plain} HTTP/1.1\\r\\nHost: example.org\\r\\n\\r\\n')\n"
            "print('tunnel:', s.recv(100).split(b'\\r\\n')[0])\n"
            "s.sendall(b'GET http://example.org/inside HTTP/1.1\\r\\nHost: example.org\\r\\n\\r\\n')\n"
            "data = b''\n"
            "while chunk := s.recv(4096): data += chunk\n"
            "print('inside:', data.split(b'\\r\\n\\r\\n')[-1])\n"
            f"s = socket.create_connection(('127.0.0.1', {PORT}), timeout=20)\n"
            f"s.sendall(b'GET http://localhost:{plain}/first HTTP/1.1\\r\\nHost: localhost:{plain}\\r\\n\\r\\n'\n"
            "          b'GET http://example.org/second HTTP/1.1\\r\\nHost: example.org\\r\\n\\r\\n')\n"
            "data = b''\n"
            "while chunk := s.recv(4096): data += chunk\n"
            "print('kept:', data.count(b'HTTP/1.0 200'), data.split(b'\\r\\n\\r\\n')[-1])"
        ),
    )
    assert "tunnel: b'HTTP/1.1 200 Connection established'" in out, out
    assert "target saw GET http://example.org/inside HTTP/1.1 Host=example.org" in out  # the allowed server answered
    assert "kept: 1 b'target saw GET /first" in out, out  # one answer: the second request went nowhere
    assert [s for s in _Target.seen if "second" in s] == []
    assert handle.refused_since(0) == []  # nothing was asked of the proxy for example.org


async def test_the_forwarder_is_no_job_of_the_shell(tmp_path, proxy, targets):
    """The shell waits for its jobs, not for the forwarder; the forwarder has a group of its
    own (a kill of the shell's group, or a look for jobs alive in it, passes it by)."""
    handle = proxy.open(RULES)
    code, out = await sandboxed(
        tmp_path,
        handle,
        "sleep 0.2 & SECONDS=0; wait; echo waited=$SECONDS jobs=$(jobs -p | wc -l); "
        "for p in /proc/[0-9]*; do grep -q 'netfwd[.]py' $p/cmdline 2>/dev/null && "
        "echo fwd ${p#/proc/} $(cut -d' ' -f5 $p/stat); done; "
        "echo shell $$ $(cut -d' ' -f5 /proc/$$/stat)",
        timeout=30,
    )
    # `wait` returns when the sleep ends (SECONDS may tick once meanwhile), not at the timeout
    assert code == 0 and ("waited=0 jobs=0" in out or "waited=1 jobs=0" in out), out
    # pid 1 is bubblewrap's own (its argv holds ours)
    fwd = [line.split()[1:] for line in out.splitlines() if line.startswith("fwd ") and line.split()[1] != "1"]
    shell = [line.split()[1:] for line in out.splitlines() if line.startswith("shell ")]
    assert len(fwd) == 1 and fwd[0][0] == fwd[0][1], out  # its own group, led by itself
    assert shell[0][1] != fwd[0][1], out


async def test_the_forwarder_dies_with_the_sandbox(tmp_path, proxy, targets):
    handle = proxy.open(RULES)
    _, out = await sandboxed(tmp_path, handle, "(sleep 300 &) ; echo started")
    assert "started" in out
    await asyncio.sleep(0.5)
    pgrep = await asyncio.create_subprocess_exec("pgrep", "-f", handle.token, stdout=subprocess.PIPE)
    alive, _ = await pgrep.communicate()
    assert alive == b"", alive


async def test_pip_and_npm_reach_a_registry_on_an_allowed_name(tmp_path, proxy, targets):
    """`pip download` and `npm view` from a registry stand-in on the host, through the
    variables `proxy_env` sets (pip's PIP_PROXY, npm's npm_config_proxy)."""
    plain, _ = targets
    if not _loopback_name(HOSTNAME):
        pytest.skip("the host name is not mapped to a loopback address here")
    handle = proxy.open(RULES)
    script = (
        f"{PY} -m pip download --no-deps --disable-pip-version-check -q -d /tmp/dl "
        f"--index-url http://{HOSTNAME}:{plain}/simple/ --trusted-host {HOSTNAME} demo-pkg && ls /tmp/dl; "
    )
    if shutil.which("npm"):
        script += f"npm view demo description --registry http://{HOSTNAME}:{plain}/ 2>&1; "
    pypi = "--index-url https://pypi.org/simple/"
    script += f"{PY} -m pip download --no-deps -q -d /tmp/dl2 {pypi} x 2>&1 | tail -3"
    _, out = await sandboxed(tmp_path, handle, script, timeout=120)
    assert "demo_pkg-1.0-py3-none-any.whl" in out, out
    if shutil.which("npm"):
        assert "served on the host's loopback" in out, out
    assert "pypi.org is not allowed (sandbox.network)" in out, out
