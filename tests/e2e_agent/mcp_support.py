"""Real MCP servers nobody here wrote, for the MCP tests.

`@modelcontextprotocol/server-everything` (the reference test server: tools with schemas,
an image, progress, prompts with arguments, resources) is installed from npm once into
`~/.cache/coder-ls-e2e/mcp` (reused while the version matches); a test that needs it is
skipped, with the reason printed, only when npm cannot reach the registry. `mcp-server-time`
(PyPI) comes with the `[test]` extra.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

EVERYTHING_VERSION = "2026.8.31"
CACHE = Path(os.environ.get("CODER_LS_E2E_CACHE", Path.home() / ".cache" / "coder-ls-e2e")) / "mcp"


def everything_js() -> Path:
    """The server's entry point, installed when missing (or skip: npm unreachable)."""
    package = CACHE / "node_modules" / "@modelcontextprotocol" / "server-everything"
    entry = package / "dist" / "index.js"
    stamp = CACHE / f".installed-everything-{EVERYTHING_VERSION}"
    if entry.is_file() and stamp.exists():
        return entry
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.skip("node/npm not installed: cannot run @modelcontextprotocol/server-everything")
    CACHE.mkdir(parents=True, exist_ok=True)
    spec = f"@modelcontextprotocol/server-everything@{EVERYTHING_VERSION}"
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--prefix", str(CACHE), spec],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0 or not entry.is_file():
        reason = f"npm could not install {spec} (registry unreachable?): {done.stderr.strip()[-300:]}"
        print(reason)
        pytest.skip(reason)
    stamp.touch()
    return entry


def everything_stdio() -> dict[str, Any]:
    return {"command": shutil.which("node") or "node", "args": [str(everything_js()), "stdio"]}


def time_server() -> dict[str, Any]:
    """mcp-server-time (PyPI), run by this interpreter."""
    return {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_user_servers(root: Path, servers: dict[str, Any]) -> Path:
    """The user's own config (the harness's XDG_CONFIG_HOME) with these `mcpServers`."""
    path = root.parent / f".xdg-{root.name}" / "coder" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def pids_with(marker: str) -> list[int]:
    """Processes whose command line holds `marker` (not this test process)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            out.append(int(entry.name))
    return out
