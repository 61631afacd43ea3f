"""A fork's history (edit and resend): the log just before one submission's first entry."""

from __future__ import annotations

from coder_ls.protocol.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from coder_ls.store.log import Header, MessageEntry, ModelEntry, TitleEntry, load_entries
from coder_ls.store.submissions import history_before

HEADER = Header(version=1, id="s", created_at=0.0, cwd="/w")


def msg(role: str, sub: str, *blocks: object) -> MessageEntry:
    return MessageEntry(message=Message(role, list(blocks)), submission_id=sub)  # type: ignore[arg-type]


LOG = [
    TitleEntry(title="first words"),
    msg("user", "s1", TextBlock("first words")),
    msg("assistant", "s1", ToolUseBlock(id="t1", name="read", input={})),
    msg("user", "s1", ToolResultBlock(tool_use_id="t1", content="ok")),
    msg("assistant", "s1", TextBlock("done one")),
    ModelEntry(model="m2", provider="anthropic"),
    msg("user", "s2", TextBlock("second words")),
    msg("assistant", "s2", TextBlock("done two")),
]


def test_the_history_stops_before_the_submission_with_every_tool_call_answered() -> None:
    loaded = load_entries(HEADER, LOG)
    fork = history_before(loaded, "s2")
    assert fork.entries == LOG[:6]
    assert [m.text() for m in fork.context] == ["first words", "", "", "done one"]
    assert fork.message_count == 4 and fork.title == "first words"
    assert fork.model is not None and fork.model.model == "m2"


def test_before_the_first_submission_nothing_is_kept_not_even_its_title() -> None:
    fork = history_before(load_entries(HEADER, LOG), "s1")
    assert fork.entries == [] and fork.context == [] and fork.title is None


def test_a_cut_inside_a_tool_call_answers_it() -> None:
    entries = [*LOG[:3], msg("user", "s3", TextBlock("next"))]  # s1's call never got its result
    fork = history_before(load_entries(HEADER, entries), "s3")
    last = fork.context[-1].content[0]
    assert isinstance(last, ToolResultBlock) and last.tool_use_id == "t1" and last.is_error
