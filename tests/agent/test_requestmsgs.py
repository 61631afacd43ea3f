"""The request's messages built step by step (`agent/requestmsgs.py`) are always what
building them from the whole context gives: appends, merges, compaction, edits in place,
images."""

from __future__ import annotations

import random
from pathlib import Path

import msgspec

from coder_ls.agent.compact import merge_roles
from coder_ls.agent.requestmsgs import RequestMessages
from coder_ls.engine.images import with_image_data
from coder_ls.protocol.messages import ImageBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock


def scratch(root: Path, context: list[Message]) -> bytes:
    return msgspec.json.encode(with_image_data(root, merge_roles(context)))


def test_built_step_by_step_equals_built_from_scratch(tmp_path: Path) -> None:
    rng = random.Random(7)
    context = [Message(role="user", content=[TextBlock(text="go")])]
    built = RequestMessages(tmp_path)
    for i in range(300):
        match rng.choice(["step", "step", "step", "note", "image", "compact", "clear", "edit", "same"]):
            case "step":
                context.append(Message(role="assistant", content=[ToolUseBlock(id=f"t{i}", name="bash", input={})]))
                context.append(Message(role="user", content=[ToolResultBlock(tool_use_id=f"t{i}", content=str(i))]))
            case "note":  # a user message after the tool results: merged with them
                context.append(Message(role="user", content=[TextBlock(text=f"note {i}")]))
            case "image":
                image = ImageBlock(media_type="image/png", sha256=f"{i:064x}", width=1, height=1, name=f"i{i}")
                context.append(Message(role="user", content=[image]))
            case "compact":  # a summary replaces the older half
                summary = Message(role="user", content=[TextBlock(text=f"summary {i}")])
                context = [summary, *context[len(context) // 2 :]]
            case "clear" if len(context) > 3:  # an old message replaced by a new object
                old = context[1]
                context[1] = Message(role=old.role, content=[TextBlock(text=f"cleared {i}")])
            case "edit" if len(context) > 3 and context[2].content:  # a content list edited in place
                context[2].content[0] = TextBlock(text=f"edited {i}")
            case _:
                pass
        assert msgspec.json.encode(built.build(context)) == scratch(tmp_path, context), i


def test_the_context_object_may_be_a_new_list_each_step(tmp_path: Path) -> None:
    """A `/rewind` gives a shorter list: it is rebuilt, not taken for an append."""
    built = RequestMessages(tmp_path)
    context = [Message(role=role, content=[TextBlock(text=role)]) for role in ("user", "assistant", "user")]
    built.build(context)
    shorter = context[:1]
    assert msgspec.json.encode(built.build(shorter)) == scratch(tmp_path, shorter)
