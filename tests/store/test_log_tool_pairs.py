"""A session's context read back from its log always pairs tool calls with results."""

from __future__ import annotations

from coder_ls.protocol.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from coder_ls.store.log import INTERRUPTED_RESULT, answer_tool_calls


def use(*ids: str) -> Message:
    return Message("assistant", [ToolUseBlock(id=i, name="bash", input={}) for i in ids])


def result(i: str) -> Message:
    return Message("user", [ToolResultBlock(tool_use_id=i, content="ok")])


def test_a_call_cut_short_gets_an_error_result() -> None:
    out = answer_tool_calls([Message("user", [TextBlock("go")]), use("a", "b"), result("a")])
    assert out[-1] == Message("user", [ToolResultBlock(tool_use_id="b", content=INTERRUPTED_RESULT, is_error=True)])


def test_a_call_cut_short_before_the_next_assistant_message() -> None:
    context = [
        Message("user", [TextBlock("go")]),
        use("a"),
        Message("user", [TextBlock("again")]),
        use("c"),
        result("c"),
    ]
    out = answer_tool_calls(context)
    assert out[3].content == [ToolResultBlock(tool_use_id="a", content=INTERRUPTED_RESULT, is_error=True)]
    assert out[4] == use("c") and out[5] == result("c")


def test_a_stray_result_is_dropped_and_a_complete_context_is_unchanged() -> None:
    complete = [Message("user", [TextBlock("go")]), use("a"), result("a"), Message("assistant", [TextBlock("done")])]
    assert answer_tool_calls(complete) == complete
    stray = [Message("user", [TextBlock("go")]), Message("assistant", [TextBlock("hi")]), result("zzz")]
    assert answer_tool_calls(stray) == stray[:2]
