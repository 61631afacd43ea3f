"""`/btw <question>`: a side question answered from the session's context as it is now
(contract section 12).

The request has the turn's system prompt and tools (the cached prefix holds) and the
context so far, with the question appended as a user message. No tool runs: the model is
told not to call one, and a call it makes anyway is ignored. Neither the question nor the
answer is recorded: the session's context and log stay as they were, and a running turn
is not disturbed (the context is read, never written).
"""

from __future__ import annotations

from coder_ls.agent.compact import merge_roles
from coder_ls.agent.streaming import watched
from coder_ls.agent.tools import ToolSpec
from coder_ls.engine.agent_api import TurnContext
from coder_ls.llm.base import Provider, ProviderRequest, Restart, TextDelta, Usage
from coder_ls.protocol.messages import Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from coder_ls.protocol.results import UsageData

ASK = """\
<side-question>
The user asks this on the side, while the work may still be going on. Answer it briefly
from what you already know; do not call any tool, and do not continue the work itself.
</side-question>

"""


def settled(messages: list[Message]) -> list[Message]:
    """The context without tool calls still waiting for their results (a turn may be
    running one now): the Messages API refuses a tool_use with no tool_result after it."""
    answered = {b.tool_use_id for m in messages for b in m.content if isinstance(b, ToolResultBlock)}
    out: list[Message] = []
    for m in messages:
        content = [b for b in m.content if not (isinstance(b, ToolUseBlock) and b.id not in answered)]
        if all(isinstance(b, ThinkingBlock) for b in content):
            continue  # nothing left but thinking (or nothing at all)
        out.append(Message(role=m.role, content=content))
    while out and out[0].role != "user":
        out.pop(0)
    return out


async def answer(
    ctx: TurnContext, provider: Provider, model: str, system: str, tools: list[ToolSpec], question: str
) -> tuple[str, UsageData]:
    config = ctx.config()
    ask = Message(role="user", content=[TextBlock(text=ASK + question.strip())])
    request = ProviderRequest(
        model=model,
        system=system,
        messages=merge_roles([*settled(list(ctx.session.context)), ask]),
        tools=tools,
        max_tokens=config.max_output_tokens,
        thinking_budget=config.thinking_budget or None,
        thinking=config.thinking,
        effort=config.effort,
        timeout_seconds=config.request_timeout_seconds,
    )
    usage = UsageData(steps=1)
    parts: list[str] = []
    async for item in watched(provider, request, ctx.report):
        match item:
            case TextDelta(text=t):
                parts.append(t)
            case Restart():
                parts.clear()
            case Usage():
                usage.input_tokens += item.input_tokens
                usage.output_tokens += item.output_tokens
                usage.cache_read_tokens += item.cache_read_tokens
                usage.cache_write_tokens += item.cache_write_tokens
            case _:
                pass  # thinking, tool calls (not run), stop
    return "".join(parts).strip(), usage
