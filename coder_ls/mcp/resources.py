"""MCP servers' resources: `@server:uri` in the user's input attaches one, and the model
gets `list_mcp_resources` / `read_mcp_resource` where a server has resources.

Only a mention whose server is a connected one counts (`@alice:example.com` in a prompt is
left alone). What is attached is the resource's text, capped; a binary resource is named,
not pasted.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coder_ls.mcp.hub import McpHub

MENTION = re.compile(r"(?<![\w@])@([A-Za-z0-9_-]{1,40}):(\S+)")
MAX_RESOURCE_CHARS = 100_000


def contents_text(result: Any, limit: int = MAX_RESOURCE_CHARS) -> str:
    parts: list[str] = []
    for item in result.contents:
        text = getattr(item, "text", None)
        if text is not None:
            parts.append(text)
        else:
            mime = getattr(item, "mime_type", None) or "binary"
            parts.append(f"[{mime} content of {item.uri}: not shown]")
    text = "\n".join(parts)
    if len(text) > limit:
        text = text[:limit] + f"\n[resource capped: {len(text) - limit} more characters not shown]"
    return text


async def attach_mentions(hub: McpHub, prompt: str) -> tuple[str, list[str]]:
    """The prompt with each `@server:uri` resource appended, and a problem per one that could
    not be read (said to the user; the mention stays as typed)."""
    attached: list[str] = []
    problems: list[str] = []
    seen: set[tuple[str, str]] = set()
    for m in MENTION.finditer(prompt):
        server, uri = m.group(1), m.group(2).rstrip(".,;:!?)")
        conn = hub.connections.get(server)
        if conn is None or (server, uri) in seen:
            continue
        seen.add((server, uri))
        try:
            if conn.state != "ready":
                await conn.wait_ready(through_backoff=True)
            result = await conn.read_resource(uri)
        except Exception as exc:  # the server's refusal or its absence: said, the turn goes on
            problems.append(f"@{server}:{uri} could not be read: {exc}")
            continue
        attached.append(f'<mcp-resource server="{server}" uri="{uri}">\n{contents_text(result)}\n</mcp-resource>')
    if not attached:
        return prompt, problems
    return prompt + "\n\n" + "\n\n".join(attached), problems
