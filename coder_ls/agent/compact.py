"""Compaction: the model summarises the conversation, and the summary replaces it.

`/compact [instructions]` does it on request; a turn does it by itself before a step
when the last step used most of the model's context window, in levels: first it clears old
tool results (`compact_clear.py`, no model call), and asks for a summary only when the
context is still over the threshold. `/compact --clear` runs the first level alone.
"""

from __future__ import annotations

from typing import Literal

from coder_ls.agent.compact_clear import clear_old, estimate_tokens, is_note, note_text
from coder_ls.agent.prompt import system_prompt
from coder_ls.agent.streaming import watched
from coder_ls.agent.tools import ToolSpec
from coder_ls.engine.agent_api import TurnContext
from coder_ls.engine.usage import SessionUsage, Tokens
from coder_ls.hooks.records import PreCompact
from coder_ls.llm.base import Provider, ProviderRequest, Restart, TextDelta, Usage
from coder_ls.protocol.events import ContextCompacted
from coder_ls.protocol.messages import Message, TextBlock, ToolResultBlock
from coder_ls.protocol.results import CompactedData

AUTO_COMPACT_SHARE = 0.8  # compact before a step when the last one used this much of the window
# a clear that leaves more than this share of the window is not enough: a summary follows (else
# the stubs of cleared results pile up and every later step resends them; benchmarks/bench_compact.py)
CLEAR_ENOUGH_SHARE = 0.5

ASK = """\
Summarise this conversation so that you can continue the work from the summary alone; the
conversation itself will be dropped. Do not call tools. Include:
- what the user asked for, in their words where it matters, and any decisions or preferences;
- what has been done: files read, created or changed (paths), commands run and their outcome;
- what is still open: the current step, errors not yet solved, the todo list;
- facts you will need again (names, paths, versions, commands that work).
Be complete but terse: lists, not prose."""

HEADER = "This session was compacted; the conversation so far is summarised here:\n\n"


def add_usage(ctx: TurnContext, model: str, usage: Usage) -> None:
    """Add a model response's tokens to the session's tally (`/cost`)."""
    tokens = Tokens(usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens)
    ctx.session.extension(SessionUsage, SessionUsage).add(ctx.submission_id, model, tokens)


def summary_text(summary: str) -> str:
    return HEADER + summary.strip()


def merge_roles(messages: list[Message]) -> list[Message]:
    """The API wants alternating roles: merge neighbours of the same role."""
    out: list[Message] = []
    for m in messages:
        if out and out[-1].role == m.role:
            first, second = out[-1].content, m.content
            # tool results must lead a user message
            results = [b for b in [*first, *second] if isinstance(b, ToolResultBlock)]
            rest = [b for b in [*first, *second] if not isinstance(b, ToolResultBlock)]
            out[-1] = Message(role=m.role, content=[*results, *rest])
        else:
            out.append(m)  # as it is: the request's messages keep their identity (`llm.messagecache`)
    return out


async def summarise(
    ctx: TurnContext,
    provider: Provider,
    model: str,
    tools: list[ToolSpec],
    instructions: str,
    *,
    system: str | None = None,
    messages: list[Message] | None = None,
    trigger: Literal["manual", "auto"] = "manual",
) -> str:
    """Ask the model for the summary (same system prompt and tools: the cache prefix holds)
    of `messages` (default: the whole context). PreCompact hooks run first (they cannot stop it)."""
    await ctx.hooks(PreCompact(trigger=trigger, custom_instructions=instructions))
    older = ctx.session.context if messages is None else messages
    ask = ASK + (f"\n\nAlso: {instructions.strip()}" if instructions.strip() else "")
    messages = merge_roles([*older, Message(role="user", content=[TextBlock(text=ask)])])
    request = ProviderRequest(
        model=model,
        system=system if system is not None else system_prompt(ctx.root),
        messages=messages,
        tools=tools,
        max_tokens=ctx.config().max_output_tokens,
        thinking_budget=ctx.config().thinking_budget or None,
        thinking=ctx.config().thinking,
        effort=ctx.config().effort,
        timeout_seconds=ctx.config().request_timeout_seconds,
    )
    ctx.report("Compacting the conversation")
    parts: list[str] = []
    async for item in watched(provider, request, ctx.report):  # retries and stalls are reported
        if isinstance(item, TextDelta):
            parts.append(item.text)
        elif isinstance(item, Restart):  # the stream was retried: its partial text is void
            parts.clear()
        elif isinstance(item, Usage):
            add_usage(ctx, model, item)
    return "".join(parts).strip()


def split_exchanges(messages: list[Message], keep_last: int) -> tuple[list[Message], list[Message]]:
    """(the older messages, the last `keep_last` exchanges). An exchange is a user message
    (not one of tool results) and everything after it up to the next one."""
    if keep_last <= 0:
        return list(messages), []
    starts = [
        n
        for n, m in enumerate(messages)
        if m.role == "user" and not any(isinstance(b, ToolResultBlock) for b in m.content)
    ]
    if len(starts) <= keep_last:
        return [], list(messages)
    cut = starts[-keep_last]
    return list(messages[:cut]), list(messages[cut:])


def tokens_around(reported: int, old: list[Message], new: list[Message]) -> tuple[int, int]:
    """(tokens before, tokens after) a compaction that turned `old` into `new`: before is what
    the last response reported, or the estimate of `old` when larger (what came after that
    response, such as tool results, is not in its figure); after is that less the estimated
    difference (the system prompt and tools, in `reported`, stay)."""
    before_estimate = estimate_tokens(old)
    before = max(reported, before_estimate)
    return before, max(0, before - before_estimate + estimate_tokens(new))


def apply_summary(ctx: TurnContext, summary: str, kept: list[Message] | None = None) -> CompactedData:
    """Replace the session's context with the summary (then `kept`, verbatim)."""
    from coder_ls.agent.skills import UsedSkills
    from coder_ls.agent.tools.todos import format_todos

    session = ctx.session
    old, reported = list(session.context), session.last_context_tokens
    before = len(session.context) - len(kept or [])
    text = summary_text(summary) + session.extension(UsedSkills, UsedSkills).note()
    if session.todos:  # the list lives on in the session: the model keeps seeing it
        text += f"\n\n# The todo list (todoRead and todoWrite still work on it)\n{format_todos(session.todos)}"
    session.compact(text, kept)
    tokens_before, tokens_after = tokens_around(reported, old, session.context)
    ctx.emit(ContextCompacted(summary=text, messages_before=before, level="summary", tokens_before=tokens_before,
                              tokens_after=tokens_after))  # fmt: skip
    return CompactedData(summary=summary, messages_before=before, level="summary", tokens_before=tokens_before,
                         tokens_after=tokens_after)  # fmt: skip


def apply_clear(ctx: TurnContext, keep: int) -> CompactedData | None:
    """The first level: clear what is older than the last `keep` tool steps (no model call);
    None when there is nothing to clear. The cleared conversation is logged as a compaction
    whose kept messages are all of it, after a note (an earlier note is replaced)."""
    session = ctx.session
    old, reported = list(session.context), session.last_context_tokens
    messages = old[1:] if old and is_note(old[0]) else old
    cleared = clear_old(messages, keep)
    if not cleared.count:
        return None
    note = note_text(cleared.count)
    session.compact(note, cleared.messages)
    tokens_before, tokens_after = tokens_around(reported, old, session.context)
    ctx.emit(ContextCompacted(summary=note, messages_before=len(old), level="clear", tokens_before=tokens_before,
                              tokens_after=tokens_after))  # fmt: skip
    return CompactedData(summary=note, messages_before=len(old), level="clear", tokens_before=tokens_before,
                         tokens_after=tokens_after, cleared=cleared.count)  # fmt: skip
