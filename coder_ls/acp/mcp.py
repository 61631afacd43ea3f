"""The ACP client's `mcpServers` (`session/new`, `session/load`) as the MCP client's configuration.

The client is the user's editor: its servers are the user's own, like the user's
`mcpServers` setting, so they start without `/trust` (`McpHub.add_client_servers`). They are
checked by the MCP client's one parser (`coder_ls/mcp/config.py`: the name rules of
`mcp__<server>__<tool>`, an http(s) URL, `${VAR}` as in the user's setting) when they are added, and a bad one
refuses the request with a clear message instead of leaving a server out in silence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acp.schema import HttpMcpServer, McpServerStdio, SseMcpServer

from coder_ls.protocol.config import McpServerConfig


class BadServers(Exception):
    """The client's servers cannot be used; the message says which and why."""


def _config(server: Any) -> McpServerConfig:
    match server:
        case McpServerStdio(command=command, args=args, env=env):
            return McpServerConfig(type="stdio", command=command, args=list(args), env={v.name: v.value for v in env})
        case HttpMcpServer(url=url, headers=headers):
            return McpServerConfig(type="http", url=url, headers={h.name: h.value for h in headers})
        case SseMcpServer(url=url, headers=headers):
            return McpServerConfig(type="sse", url=url, headers={h.name: h.value for h in headers})
        case _:
            raise BadServers(f"unknown MCP server transport {type(server).__name__}")


def client_servers(servers: Sequence[Any] | None) -> dict[str, McpServerConfig]:
    """The servers by name, in the MCP client's configuration shape."""
    out: dict[str, McpServerConfig] = {}
    for server in servers or ():
        name = getattr(server, "name", "")
        if name in out:
            raise BadServers(f"mcpServers: {name!r} is listed twice")
        out[name] = _config(server)
    return out
