"""`/context`: what fills the model context, part by part (contract section 19).

The parts are those of the request the next step would send: the fixed system prompt,
the project instructions, the tools, the listed skills, the subagents (the `task` tool,
whose description lists them), MCP tools (none until MCP servers are wired in: the row
stays, at 0), the messages, and the images among them.

Where the provider counts tokens (the Anthropic API's free `count_tokens`), each part is
the difference between two counted requests (a part alone beside a one-word message, less
that message alone), and the total is the count of the whole request. Elsewhere (the
scripted provider, or when counting fails) each part is an estimate, a quarter of its
characters, shown beside what the last model response reported (`lastResponseTokens`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

import msgspec

from coder_ls.agent.compact import merge_roles
from coder_ls.agent.prompt import system_prompt
from coder_ls.agent.skills import skills_list
from coder_ls.engine.agent_api import TurnContext
from coder_ls.llm.base import ProviderError, ProviderRequest, ToolSpec
from coder_ls.protocol.events import ContextUsage
from coder_ls.protocol.messages import Message, TextBlock
from coder_ls.protocol.results import ContextData, ContextPart
from coder_ls.store.log import answer_tool_calls

if TYPE_CHECKING:
    from coder_ls.agent.runner import Agent

PARTS = ("system", "instructions", "tools", "skills", "agents", "mcp", "messages", "images")
PROBE = [Message(role="user", content=[TextBlock(text=".")])]
IMAGE_ESTIMATE = 1600  # tokens of an image the API has not counted (a ~1.2-megapixel one)
AGENTS_TOOL = "task"
MCP_PREFIX = "mcp__"


@runtime_checkable
class CountsTokens(Protocol):
    async def count_tokens(self, request: ProviderRequest) -> int: ...


def is_image(block: object) -> bool:
    """Any image block, whatever layer defines it (tagged "image" on the wire)."""
    config = getattr(type(block), "__struct_config__", None)
    return getattr(config, "tag", None) == "image"


def without_images(messages: Sequence[Message]) -> list[Message]:
    out = []
    for m in messages:
        content = [b for b in m.content if not is_image(b)]
        out.append(Message(role=m.role, content=content or [TextBlock(text="(image)")]))
    return out


class Pieces(msgspec.Struct):
    model: str
    base: str  # the fixed system prompt
    instructions: str  # what the project instruction files add to it
    skills: str  # the skills list at its end
    tools: list[ToolSpec]  # the built-in tools
    agents: list[ToolSpec]  # the `task` tool
    mcp: list[ToolSpec]
    messages: list[Message]

    @property
    def images(self) -> int:
        return sum(1 for m in self.messages for b in m.content if is_image(b))


def _chars(value: object) -> int:
    return len(msgspec.json.encode(value)) if not isinstance(value, str) else len(value)


def estimate(p: Pieces) -> dict[str, int]:
    plain = without_images(p.messages) if p.images else p.messages
    return {
        "system": _chars(p.base) // 4,
        "instructions": _chars(p.instructions) // 4,
        "tools": _chars(p.tools) // 4,
        "skills": _chars(p.skills) // 4,
        "agents": _chars(p.agents) // 4,
        "mcp": _chars(p.mcp) // 4,
        "messages": _chars(plain) // 4 if p.messages else 0,
        "images": IMAGE_ESTIMATE * p.images,
    }


async def count(counter: CountsTokens, p: Pieces) -> tuple[dict[str, int], int]:
    """(the parts, the total), each counted by the API."""
    system = p.base + p.instructions
    all_tools = [*p.tools, *p.agents, *p.mcp]
    plain = without_images(p.messages) if p.images else p.messages
    asks: dict[str, tuple[str, list[ToolSpec], list[Message]]] = {
        "probe": ("", [], PROBE),
        "base": (p.base, [], PROBE),
        "system": (system, [], PROBE),
        "skills": (system + p.skills, [], PROBE),
        "tools": ("", p.tools, PROBE),
        "agents": ("", [*p.tools, *p.agents], PROBE),
        "mcp": ("", all_tools, PROBE),
    }
    if p.messages:
        asks["plain"] = ("", [], plain)
        asks["messages"] = ("", [], p.messages)
        asks["full"] = (system + p.skills, all_tools, p.messages)
    seen: dict[tuple[str, tuple[str, ...], int], asyncio.Future[int]] = {}

    def ask(system: str, tools: list[ToolSpec], messages: list[Message]) -> asyncio.Future[int]:
        key = (system, tuple(t.name for t in tools), id(messages))
        if key not in seen:
            request = ProviderRequest(model=p.model, system=system, messages=messages, tools=tools)
            seen[key] = asyncio.ensure_future(counter.count_tokens(request))
        return seen[key]

    futures = {name: ask(*spec) for name, spec in asks.items()}
    try:
        got = dict(zip(futures, await asyncio.gather(*futures.values()), strict=True))
    finally:
        for f in seen.values():
            f.cancel()
    parts = {
        "system": got["base"] - got["probe"],
        "instructions": got["system"] - got["base"],
        "skills": got["skills"] - got["system"],
        "tools": got["tools"] - got["probe"],
        "agents": got["agents"] - got["tools"],
        "mcp": got["mcp"] - got["agents"],
        "messages": got.get("plain", 0),
        "images": got.get("messages", 0) - got.get("plain", 0),
    }
    parts = {k: max(0, v) for k, v in parts.items()}
    total = got["full"] if p.messages else sum(parts.values())
    return parts, total


def pieces(agent: Agent, ctx: TurnContext, model: str) -> Pieces:
    config = ctx.config()
    skills = ctx.skills()
    base = system_prompt(ctx.root)
    with_instructions = agent.system(config, ())
    if with_instructions.startswith(base):
        instructions = with_instructions[len(base) :]
    else:  # not the fixed prompt then the instructions: all of it is counted as the system prompt
        base, instructions = with_instructions, ""
    from coder_ls.agent.runner import eyes_of

    specs = agent.tools_for(skills, subagents=config.agents.max_depth >= 1, config=config, eyes=eyes_of(ctx.host))[1]
    return Pieces(
        model=model,
        base=base,
        instructions=instructions,
        skills=skills_list(skills),
        tools=[s for s in specs if s.name != AGENTS_TOOL and not s.name.startswith(MCP_PREFIX)],
        agents=[s for s in specs if s.name == AGENTS_TOOL],
        mcp=[s for s in specs if s.name.startswith(MCP_PREFIX)],
        # during a turn the context can end with tool calls whose results are not in yet: each
        # gets a stand-in result (else the API refuses the count request)
        messages=merge_roles(answer_tool_calls(list(ctx.session.context))),
    )


def reply_text(data: ContextData) -> str:
    how = "counted by the API" if data.source == "api" else "estimated (characters / 4)"
    lines = [f"Context: {data.total:,} of {data.window:,} tokens ({data.percent}%), {data.model}, {how}"]
    for part in data.parts:
        share = 100 * part.tokens / data.window if data.window else 0
        lines.append(f"  {part.name:<13}{part.tokens:>9,}  {share:5.1f}%")
    if data.last_response_tokens is not None:
        lines.append(f"The last model response reported {data.last_response_tokens:,} tokens.")
    if data.note:
        lines.append(data.note)
    return "\n".join(lines)


async def context_report(agent: Agent, ctx: TurnContext) -> None:
    b = ctx.result
    try:
        provider, model = agent.provider(ctx)
    except ProviderError as exc:
        b.fail("no_model" if exc.kind == "config" else exc.kind, exc.message)
        return
    p = pieces(agent, ctx, model)
    note: str | None = None
    source: Literal["api", "estimate"] = "estimate"
    parts = estimate(p)
    total = sum(parts.values())
    if isinstance(provider, CountsTokens):
        ctx.report("Counting the context (token counting API)")
        try:
            parts, total = await count(provider, p)
            source = "api"
        except ProviderError as exc:
            note = f"Token counting failed ({exc.message}): these are estimates."
    info = provider.catalog.info(model)
    window = info.context_window if info and info.context_window else ctx.config().context_limit_tokens
    last = ctx.session.last_context_tokens or None
    data = ContextData(
        parts=[ContextPart(name=n, tokens=parts[n]) for n in PARTS], total=total, window=window,
        percent=min(100.0, round(100 * total / window, 1)) if window else 0.0, source=source, model=model,
        last_response_tokens=last, note=note,
    )  # fmt: skip
    ctx.emit(ContextUsage(used_tokens=total, limit_tokens=window))
    b.reply, b.data = reply_text(data), data
