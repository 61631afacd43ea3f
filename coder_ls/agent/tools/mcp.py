"""MCP servers' tools as the agent's: `mcp__<server>__<tool>`, the server's JSON Schema as
the input schema, the call through the server's live connection (`coder_ls/mcp/`).

A tool is offered only when its name fits the Messages API's (`^[a-zA-Z0-9_-]{1,64}$`)
and its schema is a valid JSON Schema with an object root; otherwise it is left out with
a warning and the server's other tools stay. The input the model sends is checked
against the schema before anything is sent to the server (the policy decides on the
same input). Results: text as text, images as image blocks of the tool result (the types
and sizes the API takes), a resource's text inline, anything else (audio, binary
resources) described in a line; large results capped with a note;
`isError` an error result; progress notifications on the submission's progress.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import msgspec

from coder_ls.agent.tools.base import Tool, ToolContext, ToolError, ToolOutput, ToolRegistry
from coder_ls.engine.agent_api import TurnContext
from coder_ls.llm.base import ToolSpec
from coder_ls.protocol.actions import RunAgent
from coder_ls.protocol.events import Notice
from coder_ls.protocol.messages import ImageBlock

if TYPE_CHECKING:
    from coder_ls.mcp.connection import McpConnection, ToolInfo
    from coder_ls.mcp.hub import McpHub

API_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_RESULT_CHARS = 100_000
MAX_IMAGES = 8
PREFIX = "mcp__"


class McpArgs(msgspec.Struct, frozen=True):
    """The model's arguments, checked against the server's schema."""

    values: dict[str, Any]
    # set by the tool from its server's `annotations.readOnlyHint`, never by the model:
    # plan mode runs only such tools (`agent/planpolicy.py`)
    read_only: bool = False


def tool_name(server: str, tool: str) -> str:
    return f"{PREFIX}{server}__{tool}"


def server_of(name: str) -> str | None:
    """`mcp__<server>` of an MCP tool's name (the rule that names all of a server's tools)."""
    if not name.startswith(PREFIX):
        return None
    server = name[len(PREFIX) :].split("__", 1)[0]
    return f"{PREFIX}{server}" if server else None


def schema_problem(schema: Any) -> str | None:
    """Why `schema` cannot be a tool's input schema, or None."""
    import jsonschema

    if not isinstance(schema, dict) or schema.get("type") != "object":
        return 'its input schema is not an object schema ("type": "object")'
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        return f"its input schema is invalid: {exc.message}"
    except Exception as exc:
        return f"its input schema cannot be read: {exc}"
    return None


@dataclass(frozen=True)
class McpTool(Tool[McpArgs]):
    schema: dict[str, Any] = field(default_factory=dict)
    remote: str = ""  # the tool's name on its server
    read_only: bool = False  # the server's `readOnlyHint`

    def json_schema(self) -> dict[str, Any]:
        return self.schema

    def parse(self, raw: Any) -> McpArgs:
        import jsonschema

        if isinstance(raw, McpArgs):
            return raw
        if not isinstance(raw, dict):
            raise ToolError(f"invalid input for {self.name}: expected an object")
        validator = jsonschema.validators.validator_for(self.schema)(self.schema)
        errors = sorted(validator.iter_errors(raw), key=lambda e: list(e.path))
        if errors:
            where = "/".join(str(p) for p in errors[0].path) or "(input)"
            raise ToolError(f"invalid input for {self.name}: {where}: {errors[0].message}")
        return McpArgs(values=raw, read_only=self.read_only)


def make_mcp_tools(entries: list[tuple[McpConnection, ToolInfo]]) -> tuple[list[McpTool], list[str]]:
    """The tools, and a warning for each one left out."""
    tools: list[McpTool] = []
    warnings: list[str] = []
    seen: set[str] = set()
    for conn, info in entries:
        name = tool_name(conn.name, info.name)
        if not API_NAME.match(name):
            warnings.append(f"MCP tool {info.name!r} of {conn.name!r} left out: {name!r} is not a valid tool name")
            continue
        if name in seen:
            continue
        problem = schema_problem(info.input_schema)
        if problem:
            warnings.append(f"MCP tool {info.name!r} of {conn.name!r} left out: {problem}")
            continue
        seen.add(name)
        tools.append(_make(conn, info, name))
    return tools, warnings


def _make(conn: McpConnection, info: ToolInfo, name: str) -> McpTool:
    async def run(ctx: ToolContext, args: McpArgs) -> ToolOutput:
        from coder_ls.mcp.connection import McpUnavailable

        async def progress(done: float, total: float | None, message: str | None) -> None:
            share = f"{done:g}/{total:g}" if total else f"{done:g}"
            ctx.report(f"{conn.name}: {message or info.name} ({share})")

        try:
            result = await conn.call_tool(info.name, args.values, progress)
        except McpUnavailable as exc:
            return ToolOutput(f"{exc}. Its tools are unavailable until it is back (/mcp shows it).", is_error=True)
        except Exception as exc:
            return ToolOutput(f"{name} failed: {exc}", is_error=True)
        return result_output(result, ctx.root)

    description = info.description or f"The {info.name} tool of the MCP server {conn.name}."
    return McpTool(
        name,
        description[:4000],
        McpArgs,
        run,
        schema=_clean(info.input_schema),
        remote=info.name,
        read_only=info.read_only,
    )


def _clean(schema: dict[str, Any]) -> dict[str, Any]:
    """What the Messages API takes of a schema: `$schema` dropped, `properties` present."""
    out = {k: v for k, v in schema.items() if k != "$schema"}
    out.setdefault("properties", {})
    return out


def result_output(result: Any, root: Path) -> ToolOutput:
    """An MCP tool's result for the model. Images go through the one image path
    (`engine/images.py`: checked by their bytes, fitted to the API's limits, stored by hash)."""
    from coder_ls.engine.images import BadImage, decode_base64, store

    parts: list[str] = []
    images: list[ImageBlock] = []
    for block in result.content:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "image" and len(images) < MAX_IMAGES:
            try:
                images.append(store(root, decode_base64(block.data, "image"), f"{block.mime_type} image"))
                parts.append(f"[image {block.mime_type}: attached]")
            except (BadImage, OSError) as exc:
                parts.append(f"[image {block.mime_type}: not shown ({exc})]")
        elif kind == "image" or kind == "audio":
            size = len(block.data) * 3 // 4
            parts.append(f"[{kind} {block.mime_type}, {size} bytes: not shown (a type or size the model cannot take)]")
        elif kind == "resource":
            res = block.resource
            text = getattr(res, "text", None)
            if text is not None:
                parts.append(f"[resource {res.uri}]\n{text}")
            else:
                parts.append(f"[resource {res.uri}: {getattr(res, 'mime_type', None) or 'binary'}]")
        elif kind == "resource_link":
            parts.append(f"[resource link {block.uri}: {block.name}]")
    if not parts and result.structured_content is not None:
        import json

        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    text = "\n".join(parts) or "(no output)"
    if len(text) > MAX_RESULT_CHARS:
        dropped = len(text) - MAX_RESULT_CHARS
        text = text[:MAX_RESULT_CHARS] + f"\n[output capped: {dropped} more characters not shown]"
    return ToolOutput(text, is_error=bool(result.is_error), images=tuple(images))


async def with_mcp_tools(
    turn: TurnContext, registry: ToolRegistry, specs: list[ToolSpec]
) -> tuple[ToolRegistry, list[ToolSpec]]:
    """The turn's tools plus its MCP servers' (started if they were not; those still starting
    waited for at most their start timeout). Each problem is said once (a `notice`)."""
    hub = turn.mcp
    if hub is None:
        return registry, specs
    hub.refresh()
    notes = [hub.take_notice()]
    starting = [c.name for c in hub.connections.values() if c.state in ("stopped", "starting", "restarting")]
    if starting:
        turn.report(f"Starting MCP servers: {', '.join(starting)}")
    await hub.wait_started()
    tools, warnings = make_mcp_tools(hub.all_tools())
    notes += [*hub.problems, *warnings]
    for conn in hub.connections.values():
        if conn.state in ("failed", "restarting", "starting") and conn.last_error:
            notes.append(f"MCP server {conn.name!r} is {conn.state}: {conn.last_error}")
    for note in notes:
        if note and note not in hub.said:
            hub.said.add(note)
            turn.emit(Notice(message=note))
    extra: list[Tool[Any]] = [*tools, *(make_resource_tools(hub) if hub.resources() else [])]
    if not extra:
        return registry, specs
    registry = registry.subset(None)
    for tool in extra:
        if tool.name not in registry:
            registry.add(tool)
    return registry, [*specs, *(t.spec() for t in extra)]


class ListResourcesInput(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """List the resources of the MCP servers (or of one)."""

    server: Annotated[str | None, msgspec.Meta(description="Only this server's")] = None


class ReadResourceInput(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Read one resource of an MCP server."""

    server: Annotated[str, msgspec.Meta(description="The server's name")]
    uri: Annotated[str, msgspec.Meta(description="The resource's URI, as listed")]


def make_resource_tools(hub: McpHub) -> list[Tool[Any]]:
    async def list_run(ctx: ToolContext, inp: ListResourcesInput) -> ToolOutput:
        rows = [
            f"{server}: {r.uri} ({r.name}{', ' + r.mime_type if r.mime_type else ''})"
            + (f" - {r.description}" if r.description else "")
            for server, r in hub.resources()
            if inp.server is None or server == inp.server
        ]
        return ToolOutput("\n".join(rows) or "No resources.")

    async def read_run(ctx: ToolContext, inp: ReadResourceInput) -> ToolOutput:
        from coder_ls.mcp.resources import contents_text

        conn = hub.connections.get(inp.server)
        if conn is None:
            raise ToolError(f"no MCP server {inp.server!r} (servers: {', '.join(hub.connections) or 'none'})")
        try:
            result = await conn.read_resource(inp.uri)
        except Exception as exc:  # the server's refusal is the call's result
            raise ToolError(f"{inp.server} could not read {inp.uri}: {exc}") from exc
        return ToolOutput(contents_text(result))

    return [
        Tool("list_mcp_resources", "List the resources the MCP servers offer.", ListResourcesInput, list_run),
        Tool("read_mcp_resource", "Read a resource of an MCP server by its URI.", ReadResourceInput, read_run),
    ]


async def with_mentions(turn: TurnContext, action: RunAgent) -> RunAgent:
    """`@server:uri` in the user's input: the resource attached to the turn's prompt."""
    hub = turn.mcp
    if hub is None or "@" not in action.prompt or not hub.connections:
        return action
    from coder_ls.mcp.resources import attach_mentions

    prompt, problems = await attach_mentions(hub, action.prompt)
    for problem in problems:
        turn.emit(Notice(message=problem))
    return msgspec.structs.replace(action, prompt=prompt) if prompt != action.prompt else action
