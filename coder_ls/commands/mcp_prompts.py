"""MCP servers' prompts as slash commands: `/mcp__<server>__<prompt> args`.

A source of `Command`s (source "mcp") the registry lists beside the others, in
`coder.listCommands` and completion, with the prompt's arguments as the hint
(`<required> [optional]`). Invoking one asks the server for the prompt's messages with the
arguments given (positionally, or `name=value`) and sends them as the turn.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING, Any

from coder_ls.commands.registry import Command
from coder_ls.protocol.actions import CommandOutcome, RunAgent

if TYPE_CHECKING:
    from coder_ls.commands.context import CommandContext
    from coder_ls.mcp.connection import McpConnection, PromptInfo
    from coder_ls.mcp.hub import McpHub

MAX_PROMPT_CHARS = 200_000
_PROMPT_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")  # a command name users can type


def command_name(server: str, prompt: str) -> str:
    return f"mcp__{server}__{prompt}"


def argument_hint(prompt: PromptInfo) -> str:
    return " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in prompt.arguments)


def parse_arguments(prompt: PromptInfo, text: str) -> tuple[dict[str, str], str | None]:
    """The arguments by name, or why they do not fit."""
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    names = [a.name for a in prompt.arguments]
    values: dict[str, str] = {}
    positional: list[str] = []
    for word in words:
        key, sep, value = word.partition("=")
        if sep and key in names:
            values[key] = value
        else:
            positional.append(word)
    free = [n for n in names if n not in values]
    if positional and not free:
        return {}, f"takes no more arguments than {', '.join(names) or 'none'}"
    for i, word in enumerate(positional):
        if i == len(free) - 1:
            values[free[i]] = " ".join(positional[i:])  # the last one takes the rest
            break
        values[free[i]] = word
    missing = [a.name for a in prompt.arguments if a.required and not values.get(a.name)]
    if missing:
        return {}, f"missing {', '.join(missing)}"
    return values, None


def messages_text(result: Any) -> str:
    """The prompt's messages as one turn's text (each role said when there are several)."""
    roles = {m.role for m in result.messages}
    parts: list[str] = []
    for m in result.messages:
        content = m.content
        kind = getattr(content, "type", "")
        if kind == "text":
            body = content.text
        elif kind == "resource" and getattr(content.resource, "text", None) is not None:
            body = f"[resource {content.resource.uri}]\n{content.resource.text}"
        else:
            body = f"[{kind or 'content'} not shown]"
        parts.append(f"{m.role}: {body}" if len(roles) > 1 else body)
    return "\n\n".join(parts)[:MAX_PROMPT_CHARS]


def _command(conn: McpConnection, prompt: PromptInfo) -> Command:
    name = command_name(conn.name, prompt.name)
    hint = argument_hint(prompt)

    async def run(ctx: CommandContext, args: str) -> CommandOutcome:
        values, problem = parse_arguments(prompt, args)
        if problem:
            return CommandOutcome(error=f"/{name} {hint}: {problem}", error_code="invalid_argument")
        try:
            result = await conn.get_prompt(prompt.name, values)
        except Exception as exc:  # the server's refusal or its absence: the user is told why
            return CommandOutcome(error=f"/{name}: the MCP server answered: {exc}", error_code="mcp_error")
        text = messages_text(result)
        if not text.strip():
            return CommandOutcome(error=f"/{name}: the prompt has no text", error_code="mcp_error")
        return CommandOutcome(actions=[RunAgent(prompt=text, command=name)])

    description = prompt.description or f"Prompt {prompt.name} of the MCP server {conn.name}"
    return Command(name, description[:300], hint, run, kind="prompt", source="mcp")


def prompt_commands(hub: McpHub) -> list[Command]:
    """Every prompt of every connected server, as a command."""
    return [_command(conn, p) for conn in hub.connections.values() for p in conn.prompts if _PROMPT_NAME.match(p.name)]
