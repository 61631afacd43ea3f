"""Compaction's first level: clear old tool results and long outputs, no model call.

Beyond the last `compact.keepToolResults` model steps that called tools (default 3), each
tool result, each long string in a tool call's input (a file the model wrote) and each long
output the user's side added (`!cmd` output, auto-verify output) keeps its first lines and a
note saying what was cleared, and each image becomes a one-line note naming it (images go
first: one costs as much as a page of text). Nothing else changes: every `tool_use` keeps its id and its
`tool_result`, so the request stays valid for the API, and the user's and the model's own
words stay whole. Anthropic's context editing (`clear_tool_uses`, keep the last 3 tool uses)
is the model; this runs on our side, so it works for every provider and is recorded in the
session log (a compaction entry whose `kept` is the cleared conversation: `/resume` sees it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from coder_ls.engine.images import count_images, drop_old_images
from coder_ls.protocol.messages import Block, Message, TextBlock, ToolResultBlock, ToolUseBlock

KEEP_LINES = 3  # first lines kept of what is cleared
LINE_CHARS = 120  # of each of them at most
MIN_CHARS = 600  # shorter results are left as they are (the note would save nothing)
MARK = "[cleared by compaction:"
# what the engine and the agent write into user messages as outputs (engine/tasks.shell_message,
# agent/verify.verify_message): cleared like tool results
OUTPUT_HEADS = ("I ran a shell command myself:", "<auto-verify>")
NOTE_HEAD = "Older tool results and outputs in this conversation were cleared to free context"


class Cleared(msgspec.Struct):
    messages: list[Message]
    count: int  # results, inputs and outputs cleared
    chars: int  # characters removed


def _cut(text: str, what: str) -> tuple[str, int] | None:
    """`text` cut to its first lines and a note, and the characters removed; None to keep it."""
    if len(text) < MIN_CHARS or MARK in text:
        return None
    lines = text.splitlines()
    head = "\n".join(line[:LINE_CHARS] for line in lines[:KEEP_LINES])
    rest_lines = max(0, len(lines) - KEEP_LINES)
    note = (
        f"\n{MARK} {rest_lines} more lines ({len(text) - len(head):,} characters) of this {what}; "
        "run it again if you need them]"
    )
    cut = head + note
    removed = len(text) - len(cut)
    return (cut, removed) if removed > 0 else None


def _cut_input(value: Any, what: str) -> tuple[Any, int]:
    if isinstance(value, str):
        got = _cut(value, what)
        return got if got is not None else (value, 0)
    if isinstance(value, dict):
        out, removed = {}, 0
        for k, v in value.items():
            out[k], r = _cut_input(v, what)
            removed += r
        return out, removed
    if isinstance(value, list):
        items = [_cut_input(v, what) for v in value]
        return [v for v, _ in items], sum(r for _, r in items)
    return value, 0


def _clear_block(block: Block, tools: dict[str, str]) -> tuple[Block, int]:
    if isinstance(block, ToolResultBlock) and isinstance(block.content, str):
        got = _cut(block.content, f"{tools.get(block.tool_use_id, 'tool')} result")
        if got is not None:
            return msgspec.structs.replace(block, content=got[0]), got[1]
    elif isinstance(block, ToolUseBlock):
        new_input, removed = _cut_input(block.input, f"{block.name} call's input")
        if removed:
            return msgspec.structs.replace(block, input=new_input), removed
    elif isinstance(block, TextBlock) and block.text.startswith(OUTPUT_HEADS):
        got = _cut(block.text, "output")
        if got is not None:
            return TextBlock(text=got[0]), got[1]
    return block, 0


def boundary(messages: Sequence[Message], keep: int) -> int:
    """The index of the first message kept whole: the assistant message of the `keep`-th
    last step that called tools (len(messages) when `keep` is 0... every step is old)."""
    steps = [i for i, m in enumerate(messages) if m.role == "assistant" and any(
        isinstance(b, ToolUseBlock) for b in m.content)]  # fmt: skip
    if keep <= 0:
        return len(messages)
    if len(steps) <= keep:
        return 0
    return steps[-keep]


def clear_old(messages: Sequence[Message], keep: int) -> Cleared:
    """`messages` with what is older than the last `keep` tool steps cleared."""
    end = boundary(messages, keep)
    tools = {b.id: b.name for m in messages for b in m.content if isinstance(b, ToolUseBlock)}
    old = list(messages[:end])
    images = count_images(old)
    if images:
        old = drop_old_images(old, 0, "cleared by compaction")
    messages = [*old, *messages[end:]]
    out: list[Message] = []
    count, chars = images - count_images(old), 0
    for i, m in enumerate(messages):
        if i >= end:
            out.append(m)
            continue
        blocks: list[Block] = []
        for b in m.content:
            nb, removed = _clear_block(b, tools)
            if removed:
                count, chars = count + 1, chars + removed
            blocks.append(nb)
        out.append(Message(role=m.role, content=blocks) if blocks != m.content else m)
    return Cleared(messages=out, count=count, chars=chars)


def note_text(count: int) -> str:
    return (
        f"{NOTE_HEAD} ({count} of them this time); each keeps its first lines and says what was cut. "
        "Run a tool again if you need what was cleared."
    )


def is_note(message: Message) -> bool:
    return (
        message.role == "user"
        and len(message.content) == 1
        and isinstance(message.content[0], TextBlock)
        and message.content[0].text.startswith(NOTE_HEAD)
    )


def estimate_tokens(messages: Sequence[Message]) -> int:
    """A quarter of the characters of `messages` as JSON (no tokenizer)."""
    return len(msgspec.json.encode(list(messages))) // 4
