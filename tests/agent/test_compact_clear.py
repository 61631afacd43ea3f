"""Compaction's first level on its own (agent/compact_clear.py): what is cleared, what is
kept, and that the conversation stays a valid Messages API request (tests/fakes rules)."""

from __future__ import annotations

import sys
from pathlib import Path

from coder_ls.agent.compact import merge_roles
from coder_ls.agent.compact_clear import MARK, clear_old
from coder_ls.engine.tasks import shell_message
from coder_ls.llm.anthropic_convert import messages_to_api
from coder_ls.protocol.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fakes"))
from anthropic_rules import check_request

LONG = "\n".join(f"row {n} " + "y" * 80 for n in range(200))


def step(n: int, output: str = LONG, *, error: bool = False, content: str | None = None) -> list[Message]:
    call = ToolUseBlock(
        id=f"toolu_{n}",
        name="write" if content else "read",
        input={"path": f"f{n}", "content": content} if content else {"path": f"f{n}"},
    )
    return [
        Message(role="assistant", content=[TextBlock(text=f"step {n}"), call]),
        Message(role="user", content=[ToolResultBlock(tool_use_id=f"toolu_{n}", content=output, is_error=error)]),
    ]


def conversation(steps: int) -> list[Message]:
    out = [Message(role="user", content=[TextBlock(text="do the work " + "z" * 2000)])]
    for n in range(steps):
        out += step(n)
    return out


def valid(messages: list[Message]) -> str | None:
    return check_request({"model": "m", "max_tokens": 10, "messages": messages_to_api(merge_roles(messages))})


def results(messages: list[Message]) -> dict[str, ToolResultBlock]:
    return {b.tool_use_id: b for m in messages for b in m.content if isinstance(b, ToolResultBlock)}


def test_older_results_keep_their_first_lines_and_a_note_the_last_steps_stay_whole():
    before = conversation(6)
    got = clear_old(before, keep=2)
    assert got.count == 4 and got.chars > 4 * 10_000
    after = results(got.messages)
    for n in range(4):
        text = after[f"toolu_{n}"].content
        assert text.startswith("row 0 ") and "row 2 " in text and "row 3 " not in text
        assert MARK in text and "197 more lines" in text
    assert after["toolu_4"].content == LONG and after["toolu_5"].content == LONG
    assert valid(got.messages) is None  # every tool_use still has its tool_result
    assert got.messages[0] == before[0]  # the user's words are never cut


def test_cleared_twice_is_cleared_once():
    once = clear_old(conversation(5), keep=1)
    twice = clear_old(once.messages, keep=1)
    assert twice.count == 0 and twice.messages == once.messages


def test_short_results_errors_flags_and_ids_are_kept():
    messages = [
        Message(role="user", content=[TextBlock(text="go")]),
        *step(0, "ok"),
        *step(1, LONG, error=True),
        *step(2),
    ]
    got = clear_old(messages, keep=1)
    after = results(got.messages)
    assert after["toolu_0"].content == "ok"
    assert after["toolu_1"].is_error is True and MARK in after["toolu_1"].content
    assert [b.id for m in got.messages for b in m.content if isinstance(b, ToolUseBlock)] == [
        "toolu_0",
        "toolu_1",
        "toolu_2",
    ]


def test_a_long_input_the_model_wrote_and_a_long_shell_output_are_cleared_too():
    shell = shell_message("make test", LONG, 2)
    mine = Message(role="user", content=[TextBlock(text="and a long prompt of mine " + LONG)])
    messages = [Message(role="user", content=[TextBlock(text="go")]), *step(0, "written", content=LONG), shell, mine]
    messages += step(1)
    got = clear_old(messages, keep=1)
    write = got.messages[1].content[1]
    assert isinstance(write, ToolUseBlock) and MARK in write.input["content"] and write.input["path"] == "f0"
    assert MARK in got.messages[3].content[0].text and got.messages[3].content[0].text.startswith("I ran a shell")
    assert got.messages[4].content[0].text.endswith(LONG)  # the user's own long text stays
    assert valid(got.messages) is None


def test_nothing_to_clear_with_fewer_tool_steps_than_kept():
    got = clear_old(conversation(3), keep=3)
    assert got.count == 0


def test_keep_zero_clears_every_step():
    got = clear_old(conversation(2), keep=0)
    assert got.count == 2 and valid(got.messages) is None


def test_old_images_go_first_and_the_last_steps_keep_theirs() -> None:
    from coder_ls.engine.images import count_images
    from coder_ls.protocol.messages import ImageBlock

    def shot(n: int) -> ImageBlock:
        return ImageBlock(media_type="image/png", sha256=f"{n:064x}", width=800, height=600, name=f"shot{n}.png")

    first = Message(role="user", content=[TextBlock(text="look at this"), shot(0)])
    msgs = [first]
    for n in range(6):
        call = ToolUseBlock(id=f"toolu_{n}", name="read", input={"path": f"shot{n + 1}.png"})
        result = ToolResultBlock(tool_use_id=f"toolu_{n}", content="an image", images=[shot(n + 1)])
        msgs += [Message(role="assistant", content=[call]), Message(role="user", content=[result])]
    assert count_images(msgs) == 7
    cleared = clear_old(msgs, 3)
    assert count_images(cleared.messages) == 3  # the last three steps' images
    kept = [i.name for r in results(cleared.messages).values() for i in r.images]
    assert kept == ["shot4.png", "shot5.png", "shot6.png"]
    notes = [b.text for m in cleared.messages for b in m.content if isinstance(b, TextBlock)]
    assert any("shot0.png" in t and "cleared by compaction" in t for t in notes), notes
    assert "shot1.png" in results(cleared.messages)["toolu_0"].content
    assert cleared.count >= 4
