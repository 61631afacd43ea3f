"""The editor's context and long pastes (contract section 19).

The selection is read from the editor's unsaved buffer, named by file and lines, capped
with a note; a long paste shows as `[Pasted text #N, L lines]` in events and in the
transcript a `/resume` gives back, and goes whole to the model.
"""

from __future__ import annotations

import pytest
from agent_e2e import last_user_text, requests
from anthropic_server import reply

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


def selection(uri: str, first: int, last: int) -> dict:
    return {"uri": uri, "range": {"start": {"line": first, "character": 0}, "end": {"line": last, "character": 0}}}


async def test_the_selection_comes_from_the_unsaved_buffer_and_is_capped(agent):
    a = await agent()
    await a.configure({"permissions": "balanced", "input": {"maxAttachmentBytes": 300}})
    (a.root / "sel.py").write_text("disk 1\ndisk 2\n")
    uri = a.s.open("sel.py", "".join(f"buffer line {n}\n" for n in range(1, 101)))
    a.fake.push(reply("ok"), reply("ok"))
    await a.turn("what does this do?", context=selection(uri, 1, 2))
    text = last_user_text(requests(a.fake)[-1])
    assert "(The user's selection: sel.py lines 2-3:)" in text
    assert "buffer line 2\nbuffer line 3" in text and "disk" not in text and "buffer line 4" not in text

    await a.turn("and all of it?", context=selection(uri, 0, 99))
    text = last_user_text(requests(a.fake)[-1])
    assert "[the selection was cut at 300 bytes (input.maxAttachmentBytes)]" in text
    assert "buffer line 99" not in text


async def test_a_long_paste_is_a_block_in_the_transcript_and_whole_for_the_model(agent):
    a = await agent()
    long = "".join(f"log line {n}: something happened\n" for n in range(1, 301))  # ~10,000 chars
    short = "a short paste"
    a.fake.push(reply("seen"))
    result = await a.turn("why does this fail? [Pasted text #1] and also [Pasted text #2]", pastes=[long, short])
    assert result["status"] == "completed", result
    shown = [e["text"] for e in a.s.events_of("userMessage")]
    assert shown == ["why does this fail? [Pasted text #1, 300 lines] and also a short paste"]
    sent = last_user_text(requests(a.fake)[-1])
    assert "log line 1: something" in sent and "log line 300: something" in sent
    assert "and also a short paste" in sent

    sid = result["sessionId"]
    await a.s.execute("coder.new", {})
    resumed = await a.s.execute("coder.resume", {"args": sid})
    history = resumed["data"]["history"]
    assert history[0]["text"].startswith("why does this fail? [Pasted text #1, 300 lines] and also a short paste")
    assert "log line" not in history[0]["text"]
    a.fake.push(reply("still seen"))
    await a.turn("and now?")
    assert "log line 300: something" in str(requests(a.fake)[-1].body["messages"])  # the model keeps it


async def test_a_paste_without_a_marker_is_added_at_the_end(agent):
    a = await agent()
    a.fake.push(reply("ok"))
    await a.turn("look:", pastes=["x\n" * 3000])
    assert [e["text"] for e in a.s.events_of("userMessage")] == ["look:\n[Pasted text #1, 3000 lines]"]
    assert last_user_text(requests(a.fake)[-1]).count("x\n") >= 3000
