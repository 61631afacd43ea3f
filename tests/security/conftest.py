"""Fixtures the sandbox tests share (bubblewrap and Landlock alike)."""

from __future__ import annotations

import http.server
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from anthropic_server import FakeAnthropicServer  # tests/fakes is on the path (tests/conftest.py)


@pytest.fixture
def fake() -> Iterator[FakeAnthropicServer]:
    """A fake Messages API (a module's own `fake` fixture takes precedence)."""
    with FakeAnthropicServer() as f:
        yield f


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory outside the workspace and outside /tmp (bubblewrap gives the sandbox its own /tmp)."""
    path = Path(tempfile.mkdtemp(prefix="coder-sbx-test-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


HOST_BODY = b"hello from the host's loopback\n"


class _HostHello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(HOST_BODY)))
        self.end_headers()
        self.wfile.write(HOST_BODY)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def host_http() -> Iterator[int]:
    """A plain HTTP server on the host's 127.0.0.1 (its port): what a sandbox reaches only
    through the network proxy. It answers every GET with `HOST_BODY`."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _HostHello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()
