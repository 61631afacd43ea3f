"""`/mcp`: each MCP server's status, tools and last error; `/mcp reconnect NAME`.

Reconnecting acts on the server's connection, never on the session, so the command runs
at once (it does not wait in the session's line)."""

from __future__ import annotations

from coder_ls.commands.context import CommandContext
from coder_ls.commands.registry import Command
from coder_ls.protocol.actions import CommandOutcome
from coder_ls.protocol.results import McpData, McpServerInfo

USAGE = "Usage: /mcp, or /mcp reconnect NAME"


def _line(s: McpServerInfo) -> list[str]:
    head = f"  {s.name} ({s.origin}, {s.transport}): {s.state}"
    lines = [head]
    if s.state == "untrusted":
        lines.append(f"    from this workspace's {s.source}: starts after /trust")
    if s.tools:
        lines.append(f"    tools: {', '.join(f'mcp__{s.name}__{t}' for t in s.tools)}")
    if s.prompts:
        lines.append(f"    prompts: {', '.join(s.prompts)}")
    if s.resources:
        lines.append(f"    resources: {s.resources}")
    if s.last_error:
        lines.append(f"    last error: {s.last_error}")
    return lines


async def cmd_mcp(ctx: CommandContext, args: str) -> CommandOutcome:
    hub = ctx.mcp
    if hub is None:
        return CommandOutcome(error="MCP servers are not available in this server.", error_code="mcp_unavailable")
    words = args.split()
    hub.refresh()
    if words[:1] == ["reconnect"]:
        if len(words) != 2:
            return CommandOutcome(error=USAGE, error_code="invalid_argument")
        problem = hub.reconnect(words[1])
        if problem:
            return CommandOutcome(error=problem, error_code="unknown_mcp_server")
        return CommandOutcome(reply=f"Reconnecting to the MCP server {words[1]!r}.")
    if words:
        return CommandOutcome(error=USAGE, error_code="invalid_argument")
    servers = hub.status()
    lines = ["MCP servers:" if servers else "No MCP servers are configured (mcpServers, .mcp.json)."]
    for s in servers:
        lines += _line(s)
    if hub.problems:
        lines += ["", "Problems:", *(f"  {p}" for p in hub.problems)]
    return CommandOutcome(reply="\n".join(lines), data=McpData(servers=servers, problems=list(hub.problems)))


COMMANDS = (
    Command(
        "mcp",
        "Show the MCP servers, their tools and errors; reconnect one",
        "[reconnect NAME]",
        cmd_mcp,
        immediate=True,  # a status, and a reconnect that never waits behind a turn
    ),
)
