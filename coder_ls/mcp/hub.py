"""All of a workspace's MCP servers, as the engine and the agent see them.

The hub knows which servers are configured (the user's `mcpServers`, the workspace's
`.mcp.json`, plugins' `.mcp.json`), which may run (`guard/trust.py`, row `mcp`: a
workspace's servers are code from the repository and wait for `/trust`; nothing of such
a file is even expanded before), and keeps one `McpConnection` per server that may.

Nothing starts when the hub is built (the engine is built at `initialized`): servers are
started by `start()`, which the first submission calls, and a turn waits for those still
starting at most their start timeout. The SDK is imported by the connections only.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping
from pathlib import Path

from coder_ls.environ import child_env
from coder_ls.mcp.config import MCP_FILE, NAME, McpServerSpec, parse_servers, plugin_servers, workspace_servers
from coder_ls.mcp.connection import McpConnection, PromptInfo, ResourceInfo, ToolInfo, start_timeout
from coder_ls.protocol.config import Config, McpServerConfig
from coder_ls.protocol.results import McpServerInfo

log = logging.getLogger(__name__)

CLIENT_SOURCE = "the ACP client (session/new)"


class McpHub:
    def __init__(
        self,
        root: Path,
        env: Mapping[str, str],
        *,
        config: Callable[[], Config],
        trusted: Callable[[], bool],
        on_change: Callable[[], None] = lambda: None,
    ) -> None:
        self.root = root
        self.env = env
        self._config = config
        self._trusted = trusted
        self._on_change = on_change  # a server's state, tools or prompts changed
        self._plugins: list[tuple[Path, bool]] = []
        self._client: dict[str, McpServerConfig] = {}  # the ACP client's servers (the user's own)
        self.connections: dict[str, McpConnection] = {}
        self.problems: list[str] = []
        self._noticed = False
        self.said: set[str] = set()
        self._closing: set[asyncio.Task[None]] = set()  # the warnings already given (once each)
        self._started = False
        self.version = 0  # bumped whenever a server's tools/prompts/state change

    # -- configuration --------------------------------------------------------------------------
    def set_plugins(self, plugin_roots: list[Path]) -> None:
        """The enabled plugins' servers, replacing the previous set."""
        plugins = [(root, _is_inside(root, self.root)) for root in plugin_roots]
        if plugins != self._plugins:
            self._plugins = plugins
            if self._started:
                self.sync()

    def add_client_servers(self, servers: dict[str, McpServerConfig]) -> list[str]:
        """The servers an ACP client (the user's editor) lists in `session/new`: the user's own,
        like their `mcpServers` setting, so they start without `/trust`. One bad server adds none
        and its problems are returned (the client is told); a name given again is replaced."""
        problems: list[str] = []
        parse_servers(servers, "user", self._expand_env(), CLIENT_SOURCE, problems)
        if problems:
            return problems
        self._client.update(servers)
        if self._started:
            self.sync()
        return []

    def _expand_env(self) -> dict[str, str]:
        """What `${VAR}` reads and what a server inherits: the scrubbed environment (no API key
        reaches a server, or a URL, through `${ANTHROPIC_API_KEY}`)."""
        return child_env(self._config().secrets.env_names, base=self.env)

    def specs(self) -> list[McpServerSpec]:
        problems: list[str] = []
        env = self._expand_env()
        found = parse_servers(self._config().mcp_servers, "user", env, "mcpServers", problems)
        found += parse_servers(self._client, "user", env, CLIENT_SOURCE, problems)
        trusted = self._trusted()
        if trusted and self._file_trusted():
            found += workspace_servers(self.root, env, problems)
        for plugin_root, inside in self._plugins:
            if trusted or not inside:
                found += plugin_servers(plugin_root, env, problems)
        self.problems = problems
        out: dict[str, McpServerSpec] = {}
        for spec in found:  # the first of a name wins: the user's own before the workspace's
            if spec.name in out:
                problems.append(f"{spec.source}: MCP server {spec.name!r} is already defined; this one is ignored")
                continue
            out[spec.name] = spec
        return list(out.values())

    def untrusted_names(self) -> list[str]:
        """The servers that wait for `/trust`: only their names are read."""
        folder = self._trusted()
        paths = [] if folder else [p / MCP_FILE for p, inside in self._plugins if inside]
        if not (folder and self._file_trusted()):
            paths.insert(0, self.root / MCP_FILE)
        names: list[str] = []
        for path in paths:
            names += _names_in(path)
        return names

    # -- the workspace file's own trust ------------------------------------------------------------
    def _trust_path(self) -> Path:
        from coder_ls.userdirs import state_dir

        return state_dir(self.env) / "mcp-trusted.json"

    def _file_digest(self) -> str:
        """What `/trust` approved of `.mcp.json`: its exact bytes (a pull that adds or changes a
        server is asked again, as a widening change of `.coder/config.json` is)."""
        import hashlib

        from coder_ls.saferead import read_text_or_none

        text = read_text_or_none(self.root / MCP_FILE, 1024 * 1024)
        return "" if text is None else hashlib.sha256(text.encode()).hexdigest()

    def _recorded(self) -> dict[str, str]:
        try:
            data = json.loads(self._trust_path().read_bytes())
        except (OSError, ValueError):
            return {}
        return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}

    def _file_trusted(self) -> bool:
        digest = self._file_digest()
        return not digest or self._recorded().get(str(self.root)) == digest

    def trust(self) -> None:
        """`/trust`: `.mcp.json` as it is now may start its servers (here and in later runs)."""
        from coder_ls.fsutil import ANYWHERE, write_atomic

        data = self._recorded()
        data[str(self.root)] = self._file_digest()
        path = self._trust_path()
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        text = json.dumps(data, indent=2, sort_keys=True) + "\n"
        write_atomic(path, text.encode(), root=ANYWHERE, new_mode=0o600)  # the user's own record
        self._noticed = False
        if self._started:
            self.sync()

    def take_notice(self) -> str | None:
        """Said once per server run: the workspace names servers that wait for `/trust`."""
        if self._noticed:
            return None
        names = self.untrusted_names()
        if not names:
            return None
        self._noticed = True
        listed = ", ".join(names[:10])
        changed = " It changed since you trusted it." if self._trusted() else ""
        return (
            f"This workspace's {MCP_FILE} names MCP servers ({listed}). They are programs from the "
            f"repository: none was started.{changed} Run /trust to start them."
        )

    # -- lifecycle --------------------------------------------------------------------------------
    def sync(self) -> None:
        """Connections for the servers configured now: new ones started, changed ones replaced,
        removed ones closed (in the background)."""
        wanted = {s.name: s for s in self.specs()}
        loop = asyncio.get_running_loop()
        for name, conn in list(self.connections.items()):
            if wanted.get(name) != conn.spec:
                del self.connections[name]
                closing = loop.create_task(conn.close())
                self._closing.add(closing)
                closing.add_done_callback(self._closing.discard)
        timeout = start_timeout(self.env)
        for name, spec in wanted.items():
            if name in self.connections:
                continue
            conn = McpConnection(spec, self._expand_env(), cwd=self.root, timeout=timeout, on_change=self._changed)
            self.connections[name] = conn
            conn.start()
        self.version += 1

    @property
    def started(self) -> bool:
        return self._started

    def start(self) -> None:
        """The first submission: start what may run, in the background (once)."""
        if not self._started:
            self._started = True
            self.sync()

    def refresh(self) -> None:
        """A turn or a configuration change: the configuration read again (cheap: small
        files), so an edit to `mcpServers` or `.mcp.json` applies."""
        if self._started:
            self.sync()
        else:
            self.start()

    def _changed(self, conn: McpConnection) -> None:
        self.version += 1
        self._on_change()

    async def wait_started(self) -> None:
        """For a turn: the servers still starting, at most their start timeout (in parallel)."""
        waiting = ("starting", "restarting", "stopped")
        pending = [c.wait_ready() for c in self.connections.values() if c.state in waiting]
        if pending:
            await asyncio.gather(*pending)

    def reconnect(self, name: str) -> str | None:
        """`/mcp reconnect NAME`: an error message, or None."""
        conn = self.connections.get(name)
        if conn is None:
            if name in self.untrusted_names():
                return f"MCP server {name!r} is the workspace's: it starts after /trust."
            return f"No MCP server {name!r}. Servers: {', '.join(self.connections) or '(none)'}."
        conn.reconnect()
        return None

    async def close(self) -> None:
        conns = list(self.connections.values())
        self.connections.clear()
        await asyncio.gather(*(c.close() for c in conns), return_exceptions=True)

    # -- views ------------------------------------------------------------------------------------
    def ready_tools(self) -> list[tuple[McpConnection, ToolInfo]]:
        return [(c, t) for c in self.connections.values() for t in c.tools]

    def all_tools(self) -> list[tuple[McpConnection, ToolInfo]]:
        """Every tool a server listed when it last connected (a restarting server's tools stay
        listed, and answer "unavailable" until it is back: the model's tool list, the first
        part of the cached prompt, does not change under it)."""
        return self.ready_tools()

    def prompts(self) -> list[tuple[str, PromptInfo]]:
        return [(c.name, p) for c in self.connections.values() for p in c.prompts]

    def resources(self) -> list[tuple[str, ResourceInfo]]:
        return [(c.name, r) for c in self.connections.values() for r in c.resources]

    def status(self) -> list[McpServerInfo]:
        out = [
            McpServerInfo(
                name=c.name,
                origin=c.spec.origin,
                transport=c.spec.transport,
                state=c.state,
                tools=[t.name for t in c.tools],
                prompts=[p.name for p in c.prompts],
                resources=len(c.resources),
                last_error=c.last_error,
                source=c.spec.source,
            )
            for c in self.connections.values()
        ]
        out += [
            McpServerInfo(name=n, origin="workspace", transport="?", state="untrusted", source=MCP_FILE)
            for n in self.untrusted_names()
        ]
        return out


def _names_in(path: Path) -> list[str]:
    from coder_ls.saferead import read_text_or_none

    text = read_text_or_none(path, 1024 * 1024)
    if text is None:
        return []
    try:
        data = json.loads(text)
    except ValueError:
        return []
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return []
    shown = [n for n in servers if NAME.match(n)]  # a name is shown only when it is a plain name
    return shown + ([f"{len(servers) - len(shown)} more"] if len(shown) < len(servers) else [])


def _is_inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except (OSError, ValueError):
        return False
    return True
