"""The network proxy below the sandbox tests (tests/security/test_netproxy_sandbox.py):
how rules answer a name, and the proxy on this test's event loop over its real Unix socket:
a slow client does not hold the loop, a name allowed by a wildcard that resolves to a
loopback address is refused, a released sandbox's token opens nothing, the server's proxy
stops with `shutdown`."""

from __future__ import annotations

import asyncio
import http.server
import os
import shutil
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from coder_ls.guard import netproxy
from coder_ls.protocol.config import NetworkDomains

RULES = NetworkDomains(
    allowed_domains=("pypi.org", "*.example.com", "Files.Pythonhosted.ORG.", "10.1.2.3", "[::1]", "*.0.1"),
    denied_domains=("bad.example.com", "*.evil.example.com"),
)


@pytest.mark.parametrize(
    ("host", "answer"),
    [
        ("pypi.org", "exact"),
        ("PyPI.org.", "exact"),  # case and a trailing dot are the same name
        ("files.pythonhosted.org", "exact"),
        ("www.pypi.org", "refused"),  # a name allows itself, not its sub-domains
        ("a.example.com", "wildcard"),
        ("a.b.example.com", "wildcard"),
        ("example.com", "refused"),  # `*.` is sub-domains only
        ("evilexample.com", "refused"),
        ("a.example.com.evil.net", "refused"),
        ("bad.example.com", "refused"),  # deny wins
        ("x.evil.example.com", "refused"),
        ("10.1.2.3", "exact"),
        ("10.1.2.4", "refused"),
        ("::1", "exact"),
        ("127.0.0.1", "refused"),  # `*.0.1` is a name rule: it never matches an address
        ("localhost", "refused"),
    ],
)
def test_rules_answer_a_name(host, answer):
    key = netproxy.host_key(host)
    assert key is not None
    assert netproxy.verdict(RULES, key) == answer


@pytest.mark.parametrize(
    ("host", "key"),
    [
        ("2130706433", "127.0.0.1"),  # what the resolver reads as an address is one
        ("0x7f.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("[::ffff:127.0.0.1]", "::ffff:7f00:1"),
        ("a" * 64 + ".com", None),
        ("a." * 127 + "com", None),
        ("exa mple.com", None),
        ("ex\u00e4mple.com", None),
        ("", None),
        ("a..com", None),
    ],
)
def test_names_are_read_as_the_resolver_would(host, key):
    assert netproxy.host_key(host) == key


def test_rules_that_allow_nothing_need_no_proxy():
    assert netproxy.rules_of(False) is None and netproxy.rules_of(True) is None
    assert netproxy.rules_of(NetworkDomains(denied_domains=("x.org",))) is None
    assert netproxy.rules_of(RULES) is RULES


class _Target(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"target\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def target() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Target)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


@pytest.fixture
async def proxy() -> AsyncIterator[netproxy.NetProxy]:
    run = Path(tempfile.mkdtemp(prefix="coder-netproxy-run-", dir="/var/tmp"))
    p = netproxy.NetProxy(run)
    yield p
    await p.close()
    shutil.rmtree(run, ignore_errors=True)


async def ask(handle: netproxy.ProxyHandle, request: bytes, token: str | None = None) -> bytes:
    reader, writer = await asyncio.open_unix_connection(handle.socket_path)
    writer.write((token if token is not None else handle.token).encode() + b"\n" + request)
    answer = await asyncio.wait_for(reader.read(), 20)
    writer.close()
    return answer


async def test_a_slow_client_does_not_hold_the_loop_and_is_dropped(proxy, target, monkeypatch):
    """Slowloris: a head that never ends. Meanwhile the loop stays free (other requests are
    served, a timer fires on time), and the slow connection is cut after HEAD_TIMEOUT."""
    monkeypatch.setattr(netproxy, "HEAD_TIMEOUT", 2.0)
    handle = proxy.open(NetworkDomains(allowed_domains=("localhost",)))
    slow = []
    for _ in range(20):
        reader, writer = await asyncio.open_unix_connection(handle.socket_path)
        writer.write(handle.token.encode() + b"\nGET http://localhost/ HTTP/1.1\r\nX-Slow: ")
        slow.append((reader, writer))
    started = time.monotonic()
    for _ in range(5):
        answer = await ask(handle, f"GET http://localhost:{target}/ HTTP/1.1\r\n\r\n".encode())
        assert answer.startswith(b"HTTP/1.0 200") and answer.endswith(b"target\n")
        before = time.monotonic()
        await asyncio.sleep(0.01)
        assert time.monotonic() - before < 0.5  # the loop answers at once
    assert time.monotonic() - started < 2.0
    for _, writer in slow:
        writer.write(b"a")  # trickling bytes does not extend the deadline
    closed = await asyncio.wait_for(asyncio.gather(*(r.read() for r, _ in slow)), 10)
    assert closed == [b""] * 20
    assert time.monotonic() - started < 8


async def test_a_wildcard_name_that_resolves_to_loopback_is_refused(proxy, target, monkeypatch):
    """`*.example.com` allows the name; if it resolves to 127.0.0.1 (a public name pointed at
    the host's own services) the proxy still refuses; a name listed exactly is the user's call."""
    loop = asyncio.get_running_loop()
    real = loop.getaddrinfo

    async def resolve(host, port, **kw):  # the DNS answer an attacker's zone would give
        return await real("127.0.0.1" if host.endswith(".example.com") else host, port, **kw)

    monkeypatch.setattr(loop, "getaddrinfo", resolve)
    handle = proxy.open(NetworkDomains(allowed_domains=("*.example.com", "localhost")))
    answer = await ask(handle, f"CONNECT local.example.com:{target} HTTP/1.1\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 403 coder-ls proxy: local.example.com resolves to a local address")
    assert handle.refused_since(0) == ["local.example.com"]
    reader, writer = await asyncio.open_unix_connection(handle.socket_path)
    writer.write(f"{handle.token}\nCONNECT localhost:{target} HTTP/1.1\r\n\r\n".encode())
    assert await reader.readline() == b"HTTP/1.1 200 Connection established\r\n"
    writer.close()


async def test_rules_are_read_for_each_connection_and_a_released_token_opens_nothing(proxy, target):
    handle = proxy.open(NetworkDomains(allowed_domains=("localhost",)))
    request = f"GET http://localhost:{target}/ HTTP/1.1\r\n\r\n".encode()
    assert (await ask(handle, request)).endswith(b"target\n")
    handle.rules = NetworkDomains(allowed_domains=("pypi.org",))  # the config changed
    assert b"403 coder-ls proxy: localhost is not allowed" in await ask(handle, request)
    other = proxy.open(NetworkDomains(allowed_domains=("localhost",)))
    assert (await ask(other, request)).endswith(b"target\n")
    other.close()
    assert await ask(other, request) == b""
    assert await ask(handle, request, token="f" * 32) == b""


async def test_too_many_connections_of_one_sandbox_are_cut(proxy, monkeypatch):
    monkeypatch.setattr(netproxy, "MAX_CONNECTIONS", 3)
    handle = proxy.open(NetworkDomains(allowed_domains=("localhost",)))
    held = []
    for _ in range(3):
        _, writer = await asyncio.open_unix_connection(handle.socket_path)
        writer.write(handle.token.encode() + b"\nGET http://localhost/ HTTP/1.1\r\n")
        held.append(writer)
    await asyncio.sleep(0.2)
    assert await ask(handle, b"CONNECT pypi.org:443 HTTP/1.1\r\n\r\n") == b""
    for writer in held:
        writer.close()


async def test_the_servers_proxy_lives_in_the_run_dir_and_stops_with_shutdown(tmp_path, monkeypatch):
    from coder_ls.guard import lifetime

    monkeypatch.setattr(lifetime, "run_dir", lambda: tmp_path)
    proxy = netproxy.server_proxy()
    assert netproxy.server_proxy() is proxy
    handle = proxy.open(NetworkDomains(allowed_domains=("localhost",)))
    assert Path(handle.socket_path).parent == tmp_path
    assert (os.stat(handle.socket_path).st_mode & 0o777) == 0o600
    await netproxy.shutdown()
    assert not os.path.exists(handle.socket_path)  # noqa: ASYNC240
    with pytest.raises(OSError):
        await asyncio.open_unix_connection(handle.socket_path)
