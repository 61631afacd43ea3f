"""The provider converts each message of the conversation once (`llm.messagecache`): every
request must still be exactly what converting the conversation afresh gives."""

from __future__ import annotations

import msgspec

from coder_ls.agent.compact import merge_roles
from coder_ls.llm.anthropic_convert import to_api_params
from coder_ls.llm.base import ProviderRequest
from coder_ls.llm.messagecache import MessageCache
from coder_ls.protocol.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock


def params(messages: list[Message], cache: MessageCache | None) -> bytes:
    request = ProviderRequest(model="claude-sonnet-4-5", system="s", messages=merge_roles(messages), max_tokens=64)
    return msgspec.json.encode(to_api_params(request, None, cache))


def step(context: list[Message], i: int) -> None:
    context.append(
        Message(role="assistant", content=[ToolUseBlock(id=f"t{i}", name="bash", input={"command": "true"})])
    )
    context.append(Message(role="user", content=[ToolResultBlock(tool_use_id=f"t{i}", content=f"out {i}")]))


def test_each_request_equals_a_fresh_conversion_and_carries_one_breakpoint() -> None:
    cache = MessageCache()
    context = [Message(role="user", content=[TextBlock(text="go")])]
    for i in range(6):
        step(context, i)
        sent = params(context, cache)
        assert sent == params(context, None)
        # the breakpoint of the previous request's last message must not stay behind
        assert sent.count(b"cache_control") == 2, sent  # the system prompt's and the last message's


def test_replaced_and_edited_messages_are_converted_again() -> None:
    cache = MessageCache()
    context = [Message(role="user", content=[TextBlock(text="go")])]
    for i in range(3):
        step(context, i)
    params(context, cache)
    # compaction replaces a message; a caller editing a content list in place is seen too
    context[2] = Message(role="user", content=[ToolResultBlock(tool_use_id="t0", content="[cleared]")])
    context[4].content[0] = ToolResultBlock(tool_use_id="t1", content="edited in place")
    context.append(Message(role="user", content=[TextBlock(text="and a note")]))  # merged with the result before
    sent = params(context, cache)
    assert sent == params(context, None)
    assert b"[cleared]" in sent and b"edited in place" in sent and b"out 0" not in sent and b"out 1" not in sent
