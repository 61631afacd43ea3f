"""Compaction: the model summarises the conversation, and the summary replaces it.

`/compact [instructions]` does it on request; a turn does it by itself before a step
when the last step used most of the model's context window.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coder_ls.agent.prompt import system_prompt
from coder_ls.engine.submission import SubmissionState
from coder_ls.protocol.events import ContextCompacted
from coder_ls.protocol.messages import Message, TextBlock

if TYPE_CHECKING:
    from coder_ls.engine.executor import Engine
    from coder_ls.llm.base import Provider

AUTO_COMPACT_SHARE = 0.8  # compact before a step when the last one used this much of the window

ASK = """\
Summarise this conversation so that you can continue the work from the summary alone; the
conversation itself will be dropped. Do not call tools. Include:
- what the user asked for, in their words where it matters, and any decisions or preferences;
- what has been done: files read, created or changed (paths), commands run and their outcome;
- what is still open: the current step, errors not yet solved, the todo list;
- facts you will need again (names, paths, versions, commands that work).
Be complete but terse: lists, not prose."""

HEADER = "This session was compacted; the conversation so far is summarised here:\n\n"


def summary_text(summary: str) -> str:
    return HEADER + summary.strip()


async def summarise(engine: Engine, state: SubmissionState, provider: Provider, model: str, instructions: str) -> str:
    """Ask the model for the summary (same system prompt and tools: the cache prefix holds)."""
    from coder_ls.agent.turn import engine_tools, merge_roles
    from coder_ls.llm.base import ProviderRequest, TextDelta

    session = state.session
    ask = ASK + (f"\n\nAlso: {instructions.strip()}" if instructions.strip() else "")
    messages = merge_roles([*session.context, Message(role="user", content=[TextBlock(text=ask)])])
    request = ProviderRequest(
        model=model,
        system=system_prompt(engine.root),
        messages=messages,
        tools=engine_tools(engine).specs(),
        max_tokens=engine.config.max_output_tokens,
    )
    state.report("Compacting the conversation")
    parts: list[str] = []
    stream = provider.stream(request)
    try:
        async for item in stream:
            if isinstance(item, TextDelta):
                parts.append(item.text)
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
    return "".join(parts).strip()


def apply_summary(state: SubmissionState, summary: str) -> int:
    """Replace the session's context with the summary; returns how many messages it replaced."""
    session = state.session
    before = len(session.context)
    text = summary_text(summary)
    session.compact(text)
    state.emit(ContextCompacted(summary=text, messages_before=before))
    return before
