"""Which MCP servers there are: `.mcp.json` at the workspace root, the user's `mcpServers`,
and a plugin's own `.mcp.json`, in the shape Claude Code and other clients write:

    {"mcpServers": {"name": {"command": "...", "args": [...], "env": {...}}
                            | {"type": "http", "url": "...", "headers": {...}}}}

`${VAR}` and `${VAR:-default}` are expanded in `command`, `args`, `env`, `url` and
`headers` from the server's own environment (never from the workspace). A bad entry is
dropped alone, with a problem saying why; the others stay.

Nothing here starts anything: where a server comes from (`origin`) is what the trust gate
(`guard/trust.py`, row `mcp`) decides on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec

from coder_ls.protocol.config import McpServerConfig

Origin = Literal["user", "workspace", "plugin"]
Transport = Literal["stdio", "http", "sse"]

# The API's tool-name pattern is ^[a-zA-Z0-9_-]{1,64}$: a server's name goes into every
# `mcp__<server>__<tool>` name, so it is held to the same characters.
NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
MCP_FILE = ".mcp.json"
MAX_CONFIG_BYTES = 1024 * 1024


class McpServerSpec(msgspec.Struct, frozen=True):
    """One configured server, its variables expanded."""

    name: str
    origin: Origin
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    source: str = ""  # the file it came from (for /mcp and the messages)


class Unexpanded(ValueError):
    """A `${VAR}` with no value and no default."""


def expand(text: str, env: Mapping[str, str]) -> str:
    """`${VAR}` and `${VAR:-default}` from `env`; an unset variable without a default is an error
    (Claude Code refuses the server too: a command line with a hole in it is not run)."""

    def one(m: re.Match[str]) -> str:
        value = env.get(m.group(1))
        if value is None or (value == "" and m.group(2) is not None):
            if m.group(2) is None:
                raise Unexpanded(f"${{{m.group(1)}}} is not set")
            return m.group(2)
        return value

    return _VAR.sub(one, text)


def parse_servers(
    data: Any, origin: Origin, env: Mapping[str, str], source: str, problems: list[str]
) -> list[McpServerSpec]:
    """The servers of one `mcpServers` mapping; each bad one dropped with a problem."""
    if data is None:
        return []
    if not isinstance(data, dict):
        problems.append(f"{source}: mcpServers must be an object")
        return []
    out: list[McpServerSpec] = []
    for name, raw in data.items():
        try:
            out.append(_one(name, raw, origin, env, source))
        except (ValueError, msgspec.ValidationError) as exc:
            problems.append(f"{source}: MCP server {name!r} left out: {exc}")
    return out


def _one(name: str, raw: Any, origin: Origin, env: Mapping[str, str], source: str) -> McpServerSpec:
    if not NAME.match(name) or "__" in name:
        # no "__": `mcp__a__b__tool` would read as server `a` and let a server named `a__b`
        # borrow the rules written for `mcp__a`
        raise ValueError("a server name is 1-40 letters, digits, '_' or '-', without '__'")
    server = raw if isinstance(raw, McpServerConfig) else msgspec.convert(raw, McpServerConfig)
    kind = server.type or ("stdio" if server.command else "http" if server.url else None)
    if kind is None:
        raise ValueError('it needs "command" (stdio) or "url" (http)')
    if kind in ("streamable-http", "streamableHttp"):
        kind = "http"
    pairs = lambda values: tuple((k, expand(v, env)) for k, v in values.items())  # noqa: E731
    if kind == "stdio":
        if not server.command:
            raise ValueError('a stdio server needs "command"')
        return McpServerSpec(
            name=name,
            origin=origin,
            transport="stdio",
            command=expand(server.command, env),
            args=tuple(expand(a, env) for a in server.args),
            env=pairs(server.env),
            source=source,
        )
    if not server.url:
        raise ValueError(f'a {kind} server needs "url"')
    url = expand(server.url, env)
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"url {url!r} is not http(s)")
    return McpServerSpec(
        name=name,
        origin=origin,
        transport="sse" if kind == "sse" else "http",
        url=url,
        headers=pairs(server.headers),
        source=source,
    )


def read_mcp_file(path: Path, origin: Origin, env: Mapping[str, str], problems: list[str]) -> list[McpServerSpec]:
    """The servers of a `.mcp.json` (the workspace's or a plugin's); none when it is absent."""
    from coder_ls.saferead import read_text_or_none

    text = read_text_or_none(path, MAX_CONFIG_BYTES)
    if text is None:
        return []
    try:
        data = json.loads(text)
    except ValueError as exc:
        problems.append(f"{path}: not JSON ({exc})")
        return []
    if not isinstance(data, dict):
        problems.append(f"{path}: must be an object with mcpServers")
        return []
    return parse_servers(data.get("mcpServers"), origin, env, str(path), problems)


def workspace_servers(root: Path, env: Mapping[str, str], problems: list[str]) -> list[McpServerSpec]:
    return read_mcp_file(root / MCP_FILE, "workspace", env, problems)


def plugin_servers(plugin_root: Path, env: Mapping[str, str], problems: list[str]) -> list[McpServerSpec]:
    """A plugin's servers (its `.mcp.json`), `${CLAUDE_PLUGIN_ROOT}` set to its folder as
    Claude Code does. The caller decides the origin's trust: a plugin inside the workspace is
    the workspace's (see `McpHub.set_plugins`)."""
    plugin_env = {**env, "CLAUDE_PLUGIN_ROOT": str(plugin_root)}
    return read_mcp_file(plugin_root / MCP_FILE, "plugin", plugin_env, problems)
