"""The sandbox's only way to the network when `sandbox.network` names domains.

A sandbox with domain rules runs in its own network namespace (bubblewrap's
`--unshare-net`: nothing but its own loopback). Inside it, `guard/netfwd.py` listens on
127.0.0.1 and relays each connection to this proxy's Unix socket, which is bound into the
sandbox; `HTTP(S)_PROXY` point at the forwarder. The proxy runs in the server, on its
event loop (no thread, no process): one per server, started by the first sandbox that
needs it, its socket in the server's private run directory (`lifetime.run_dir()`),
stopped with the server (`shutdown`).

One socket serves every sandbox. A Unix socket says nothing of who connected (every
sandbox runs as the same user, and a sandbox without network could connect to any socket
it can see: connecting is not a write), so the forwarder opens each connection with its
sandbox's token (`ProxyHandle.token`, 128 random bits, known only inside that sandbox);
the token picks the sandbox's rules, read anew for each connection (`ProxyHandle.rules`
may change with the config), and the log of what it refused. No token, no network.

What the proxy speaks: HTTP/1.x `CONNECT host:port` (a tunnel: HTTPS, git, anything) and
absolute-form `GET http://host/...` (plain HTTP, sent on with `Connection: close`). It
decides on the host name the client asked for, before any DNS lookup: a denied name
(`deniedDomains`, which win) or one no `allowedDomains` entry matches gets a 403 whose
status line and body say `coder-ls proxy: <domain> is not allowed (sandbox.network)`, and
is recorded (`ProxyHandle.refused_since`) so the bash tool can name it. An IP address is
reached only when listed. A name allowed by a wildcard (`*.example.com`) that resolves to
a loopback, link-local or unspecified address is refused too (a public name pointed at
127.0.0.1 would reach the host's own services). Requests that are not a proxy's (origin
form, a `Host` naming another host than the target, credentials in the URL, a head past
64 KiB or slower than 30 s) get a 400 or are dropped. Nothing a request carries is
logged but the refused domain: URLs hold tokens.

Hand-written on asyncio streams rather than a library: see benchmarks/README.md, "The
sandbox's network proxy" (the libraries run their own threads or processes, or cannot
name a refusal, or import 0.2-2 s of code; this is ~450 lines with the rules).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ipaddress
import logging
import os
import secrets
import socket
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from coder_ls.protocol.config import NetworkDomains

log = logging.getLogger(__name__)

REFUSED = "coder-ls proxy: {} is not allowed (sandbox.network)"
HEAD_LIMIT = 64 * 1024  # a request head (or the token line) longer than this is refused
HEAD_TIMEOUT = 30.0  # seconds for the token and the request head: a slow client is dropped
CONNECT_TIMEOUT = 30.0  # seconds to reach the upstream, every address tried
MAX_CONNECTIONS = 256  # open connections of one sandbox; more are closed at once
TOKEN_LEN = 32  # hex characters
CHUNK = 256 * 1024
KEPT_REFUSALS = 200
# Headers that belong to one hop (RFC 9110 7.6.1) and the client's proxy credentials.
HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"proxy-connection",
        b"keep-alive",
        b"proxy-authorization",
        b"proxy-authenticate",
        b"te",
        b"upgrade",
    }
)


def rules_of(network: bool | NetworkDomains) -> NetworkDomains | None:
    """The domain rules a `sandbox.network` value asks the proxy for: None for `true`,
    `false`, and for rules that allow nothing (which are no network, with no proxy)."""
    if isinstance(network, NetworkDomains) and network.allowed_domains:
        return network
    return None


# -- names and rules ---------------------------------------------------------------------------
def host_key(host: str) -> str | None:
    """`host` as rules compare it: lower case, no trailing dot, an IP address in its normal
    form (`127.1` and `0x7f000001` are 127.0.0.1, as the resolver would read them); None when
    it is no host name at all."""
    if not host or len(host) > 255 or not host.isascii():
        return None
    if host.startswith("[") and host.endswith("]"):
        try:
            return str(ipaddress.IPv6Address(host[1:-1]))
        except ValueError:
            return None
    with contextlib.suppress(ValueError):
        return str(ipaddress.ip_address(host))
    name = host.lower()
    name = name[:-1] if name.endswith(".") else name
    labels = name.split(".")
    if len(name) > 253 or not all(0 < len(x) <= 63 and all(c.isalnum() or c in "-_" for c in x) for x in labels):
        return None
    with contextlib.suppress(OSError):
        return socket.inet_ntoa(socket.inet_aton(name))  # numbers in a form only inet_aton reads
    return name


def _is_ip(key: str) -> bool:
    try:
        ipaddress.ip_address(key)
    except ValueError:
        return False
    return True


@functools.lru_cache(maxsize=64)
def _compiled(rules: NetworkDomains) -> tuple[frozenset[str], tuple[str, ...], frozenset[str], tuple[str, ...]]:
    """(allowed names, allowed suffixes, denied names, denied suffixes) of `rules`."""

    def split(entries: Iterable[str]) -> tuple[frozenset[str], tuple[str, ...]]:
        names, suffixes = set(), []
        for entry in entries:
            if entry.startswith("*."):
                key = host_key(entry[2:])
                if key is not None and not _is_ip(key):
                    suffixes.append("." + key)
            else:
                key = host_key(entry)
                if key is not None:
                    names.add(key)
        return frozenset(names), tuple(suffixes)

    return (*split(rules.allowed_domains), *split(rules.denied_domains))


Verdict = Literal["exact", "wildcard", "refused"]


def verdict(rules: NetworkDomains, key: str) -> Verdict:
    """How `rules` answer host `key` (from `host_key`): allowed by name, by a wildcard, or refused.
    A denied entry wins; a wildcard never matches an IP address."""
    allowed, allowed_sfx, denied, denied_sfx = _compiled(rules)
    ip = _is_ip(key)
    if key in denied or (not ip and key.endswith(denied_sfx)):
        return "refused"
    if key in allowed:
        return "exact"
    if not ip and key.endswith(allowed_sfx):
        return "wildcard"
    return "refused"


def _local(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast


# -- the sandboxes' side ------------------------------------------------------------------------
class ProxyHandle:
    """One sandbox's way through the proxy: the socket to bind into it, its token, its rules
    (read for each connection: set `rules` when the config changes), what was refused."""

    def __init__(self, proxy: NetProxy, rules: NetworkDomains) -> None:
        self.proxy = proxy
        self.rules = rules
        self.token = secrets.token_hex(TOKEN_LEN // 2)
        self.open_connections = 0
        self._refused: list[tuple[int, str]] = []
        self._seq = 0

    @property
    def socket_path(self) -> str:
        return str(self.proxy.socket_path)

    def mark(self) -> int:
        """A point in the refusal log (take it before a command, pass it to `refused_since`)."""
        return self._seq

    def refused_since(self, mark: int) -> list[str]:
        """The domains refused since `mark`, each once, in the order first refused."""
        return list(dict.fromkeys(domain for seq, domain in self._refused if seq > mark))

    def record(self, domain: str) -> None:
        self._seq += 1
        self._refused.append((self._seq, domain))
        del self._refused[:-KEPT_REFUSALS]

    def close(self) -> None:
        """The sandbox is gone: its token opens nothing any more."""
        self.proxy.release(self)


def _bind(sock: socket.socket, path: Path) -> None:
    """Bind `sock` at `path`, however deep: a Unix socket's address is at most 107 bytes, so a
    long path is reached through a descriptor of its folder (`/proc/self/fd/N/name`)."""
    if len(os.fsencode(path)) < 100:
        sock.bind(str(path))
        return
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        sock.bind(f"/proc/self/fd/{folder}/{path.name}")
    finally:
        os.close(folder)


class _Refusal(Exception):
    def __init__(self, status: int, reason: str, domain: str | None = None) -> None:
        super().__init__(reason)
        self.status, self.reason, self.domain = status, reason, domain


class NetProxy:
    """The server's proxy: one Unix socket, the sandboxes told apart by their tokens."""

    def __init__(self, directory: Path) -> None:
        self.socket_path = Path(directory) / f"netproxy-{secrets.token_hex(4)}.sock"
        self._handles: dict[str, ProxyHandle] = {}
        self._server: asyncio.AbstractServer | None = None
        self._starting: asyncio.Task[asyncio.AbstractServer] | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def open(self, rules: NetworkDomains) -> ProxyHandle:
        """A handle for a new sandbox; starts listening on first use (in the running loop).
        Synchronous: the socket accepts (into its backlog) before this returns."""
        if self._starting is None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.socket_path)
            _bind(sock, self.socket_path)
            os.chmod(self.socket_path, 0o600)
            sock.listen(128)
            serving = asyncio.start_unix_server(self._accept, sock=sock, limit=HEAD_LIMIT)
            self._starting = asyncio.get_running_loop().create_task(serving)
        handle = ProxyHandle(self, rules)
        self._handles[handle.token] = handle
        return handle

    def release(self, handle: ProxyHandle) -> None:
        self._handles.pop(handle.token, None)

    async def close(self) -> None:
        """Stop listening, cut every open connection, remove the socket."""
        self._handles.clear()
        if self._starting is not None:
            with contextlib.suppress(Exception):
                server = await self._starting
                server.close()
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.gather(*self._tasks, return_exceptions=True)
        with contextlib.suppress(OSError):
            os.unlink(self.socket_path)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)  # type: ignore[arg-type]
        handle: ProxyHandle | None = None
        try:
            line = await asyncio.wait_for(reader.readexactly(TOKEN_LEN + 1), HEAD_TIMEOUT)
            handle = self._handles.get(line[:TOKEN_LEN].decode("ascii", "replace"))
            if handle is None or line[TOKEN_LEN:] != b"\n" or handle.open_connections >= MAX_CONNECTIONS:
                handle = None
                return
            handle.open_connections += 1
            await _serve(handle, reader, writer)
        except (TimeoutError, OSError, EOFError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            pass  # `close`: the connection's end (the stream's callback would log a cancelled task)
        finally:
            if handle is not None:
                handle.open_connections -= 1
            writer.close()
            self._tasks.discard(task)  # type: ignore[arg-type]


# -- one connection -----------------------------------------------------------------------------
async def _serve(handle: ProxyHandle, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT)
        except (asyncio.LimitOverrunError, ValueError):
            raise _Refusal(431, "coder-ls proxy: request head too large") from None
        method, target, version, headers = _parse_head(head)
        if method == b"CONNECT":
            host, port = _authority(target, None)
        else:
            host, port, path = _absolute(target)
            lines = _forwarded_headers(headers, host, target)
        key = host_key(host)
        if key is None:
            raise _Refusal(400, "coder-ls proxy: not a host name (sandbox.network)")
        answer = verdict(handle.rules, key)
        if answer == "refused":
            raise _Refusal(403, REFUSED.format(key), key)
        up_reader, up_writer = await _connect(key, port, answer == "wildcard")
    except _Refusal as refusal:
        if refusal.domain is not None:
            handle.record(refusal.domain)
            log.info("network proxy: refused %s", refusal.domain)
        _reply(writer, refusal.status, refusal.reason)
        with contextlib.suppress(OSError):
            await writer.drain()
        return
    try:
        if method == b"CONNECT":
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            up_writer.write(b"%s %s %s\r\n%s\r\n" % (method, path, version, b"".join(lines)))
        await _relay(reader, writer, up_reader, up_writer)
    finally:
        up_writer.close()


def _parse_head(head: bytes) -> tuple[bytes, bytes, bytes, list[tuple[bytes, bytes]]]:
    lines = head[:-4].split(b"\r\n")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or parts[2] not in (b"HTTP/1.1", b"HTTP/1.0") or not parts[0].isalpha():
        raise _Refusal(400, "coder-ls proxy: not an HTTP/1.x request")
    headers = []
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep or not name or name != name.strip() or line[:1] in (b" ", b"\t") or b"\n" in line:
            raise _Refusal(400, "coder-ls proxy: malformed header")
        headers.append((name, value.strip()))
    return parts[0].upper(), parts[1], parts[2], headers


def _authority(authority: bytes, default_port: int | None) -> tuple[str, int]:
    """(host, port) of `host:port`, `[v6]:port` (port optional when `default_port` is given)."""
    text = authority.decode("ascii", "replace")
    if text.startswith("["):
        host, _, rest = text.partition("]")
        host += "]"
        port_text = rest[1:] if rest.startswith(":") else ("" if not rest else "x")
    else:
        host, _, port_text = text.rpartition(":") if ":" in text else (text, "", "")
    if not port_text and default_port is not None:
        return host, default_port
    if not port_text.isdigit() or not 0 < int(port_text) < 65536 or len(port_text) > 5:
        raise _Refusal(400, "coder-ls proxy: the target needs a port (host:port)")
    return host, int(port_text)


def _absolute(target: bytes) -> tuple[str, int, bytes]:
    """(host, port, origin-form path) of an absolute-form `http://` target."""
    if not target[:7].lower() == b"http://":
        if target[:8].lower() == b"https://":
            raise _Refusal(400, "coder-ls proxy: https goes through CONNECT")
        raise _Refusal(400, "coder-ls proxy: not a proxy request (absolute URL or CONNECT)")
    rest = target[7:]
    end = min((i for i in (rest.find(b"/"), rest.find(b"?"), rest.find(b"#")) if i >= 0), default=len(rest))
    authority, path = rest[:end], rest[end:].split(b"#", 1)[0]
    if b"@" in authority:
        raise _Refusal(400, "coder-ls proxy: credentials in the URL are not sent")
    host, port = _authority(authority, 80)
    return host, port, (path if path.startswith(b"/") else b"/" + path)


def _forwarded_headers(headers: list[tuple[bytes, bytes]], host: str, target: bytes) -> list[bytes]:
    """The header lines sent upstream: the hop's own dropped, `Host` the target's (a `Host`
    naming another host is refused: a shared front would route by it)."""
    hosts = [v for n, v in headers if n.lower() == b"host"]
    if len(hosts) > 1:
        raise _Refusal(400, "coder-ls proxy: more than one Host header")
    if hosts:
        named, _ = _authority(hosts[0], 80) if hosts[0] else ("", 0)
        if host_key(named) != host_key(host):
            raise _Refusal(400, "coder-ls proxy: the Host header names another host than the URL")
    named_by_connection = {t.strip().lower() for n, v in headers if n.lower() == b"connection" for t in v.split(b",")}
    out = [] if hosts else [b"Host: " + target[7:].split(b"/", 1)[0].split(b"?", 1)[0] + b"\r\n"]
    for name, value in headers:
        low = name.lower()
        if low in HOP_BY_HOP or low in named_by_connection:
            continue
        out.append(name + b": " + value + b"\r\n")
    out.append(b"Connection: close\r\n")
    return out


async def _connect(key: str, port: int, by_wildcard: bool) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to `key`:`port`, its name allowed already (the lookup happens only now)."""
    loop = asyncio.get_running_loop()
    try:
        infos = await asyncio.wait_for(loop.getaddrinfo(key, port, type=socket.SOCK_STREAM), CONNECT_TIMEOUT)
    except (TimeoutError, OSError):
        raise _Refusal(502, f"coder-ls proxy: cannot resolve {key}") from None
    addresses = [str(info[4][0]) for info in infos]
    if by_wildcard and any(_local(a) for a in addresses):
        raise _Refusal(403, f"coder-ls proxy: {key} resolves to a local address (sandbox.network)", key)
    for family, _, _, _, address in infos:
        try:
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.setblocking(False)
            try:
                await asyncio.wait_for(loop.sock_connect(sock, address), CONNECT_TIMEOUT)
            except BaseException:
                sock.close()
                raise
            return await asyncio.open_connection(sock=sock, limit=HEAD_LIMIT)
        except (TimeoutError, OSError):
            continue
    raise _Refusal(502, f"coder-ls proxy: cannot connect to {key}:{port}")


def _reply(writer: asyncio.StreamWriter, status: int, reason: str) -> None:
    body = (reason + "\n").encode()
    head = b"HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n" % (status, reason.encode())
    writer.write(head + b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(CHUNK):
        writer.write(data)
        await writer.drain()
    if writer.can_write_eof():
        writer.write_eof()


async def _relay(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    up_reader: asyncio.StreamReader,
    up_writer: asyncio.StreamWriter,
) -> None:
    """Bytes both ways until both sides are done (a half close is passed on) or one fails."""
    tasks = [asyncio.ensure_future(_pump(reader, up_writer)), asyncio.ensure_future(_pump(up_reader, writer))]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


# -- the server's one proxy ---------------------------------------------------------------------
_proxy: NetProxy | None = None


def server_proxy() -> NetProxy:
    """The server's proxy (made on first use; its socket in the server's run directory)."""
    global _proxy
    if _proxy is None:
        from coder_ls.guard import lifetime

        _proxy = NetProxy(lifetime.run_dir())
    return _proxy


async def shutdown() -> None:
    """Stop the server's proxy, if it was started (the server's shutdown and exit)."""
    global _proxy
    proxy, _proxy = _proxy, None
    if proxy is not None:
        await proxy.close()
