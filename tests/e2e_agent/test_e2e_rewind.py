"""`/diff turn [N]` and `/rewind` over LSP (contract section 19): per-submission diffs with
shell side effects, and going back in code, conversation or both, across /compact and /resume."""

from __future__ import annotations

import pytest
from agent_e2e import all_text, requests
from anthropic_server import reply

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


def _write(call_id: str, path: str, content: str) -> dict:
    return {"toolCalls": [{"id": call_id, "name": "write", "input": {"path": path, "content": content}}]}


def _bash(call_id: str, command: str) -> dict:
    return {"toolCalls": [{"id": call_id, "name": "bash", "input": {"command": command}}]}


async def _three_submissions(a, tag: str) -> None:
    """1: the agent writes one.txt and, through its (sandboxed) shell, appends to README.md;
    2: it writes two.txt; 3: the user's `!` shell writes three.txt."""
    a.fake.push(
        _write("toolu_w1", "one.txt", f"ONE {tag}\n"), _bash("toolu_b1", f"echo SIDE {tag} >> README.md"), reply("done")
    )
    assert (await a.turn("first: make one.txt and side.txt ALPHA-WORD"))["status"] == "completed"
    a.fake.push(_write("toolu_w2", f"two-{tag}.txt", f"TWO {tag}\n"), reply("Second done."))
    assert (await a.turn("second: make two.txt BETA-WORD"))["status"] == "completed"
    assert (await a.turn(f"!echo THREE {tag} > three-{tag}.txt"))["status"] == "completed"


async def test_diff_turn_shows_what_one_submission_changed_shell_side_effects_included(agent):
    a = await agent(permissions="yolo", workflow={"autoVerifyAfterEdit": False})
    await _three_submissions(a, "diff")
    last = await a.s.execute("coder.input", {"text": "/diff turn"})
    assert (last["mode"], last["status"]) == ("command", "completed"), last
    assert last["data"]["kind"] == "diff" and last["data"]["submission"] == 3
    assert last["data"]["files"] == ["three-diff.txt"] and "+THREE" in last["data"]["diff"]
    first = await a.s.execute("coder.diff", {"args": "turn 1"})
    assert sorted(first["data"]["files"]) == ["README.md", "one.txt"]  # the bash tool's change too
    assert (
        "+ONE" in first["data"]["diff"]
        and "+SIDE" in first["data"]["diff"]
        and "two-diff.txt" not in first["data"]["diff"]
    )
    assert "diff --git a/one.txt b/one.txt" in first["data"]["diff"]  # a unified diff the clients can show
    changes = {c["path"]: c for c in first["data"]["changes"]}  # and each file whole, for a diff editor
    assert changes["one.txt"]["before"] is None and changes["one.txt"]["after"] == "ONE diff\n"
    assert changes["README.md"]["after"] == changes["README.md"]["before"] + "SIDE diff\n"
    whole = await a.s.execute("coder.input", {"text": "/diff"})  # still the workspace diff
    assert "three-diff.txt" in whole["reply"] and whole["data"].get("submission") is None
    for bad in ("turn 9", "turn x", "turn 1 2", "turn 0"):
        r = await a.s.execute("coder.input", {"text": f"/diff {bad}"})
        assert r["status"] == "failed" and r["error"]["code"] in ("unknown_submission", "invalid_argument"), (bad, r)


async def test_rewind_lists_and_goes_back_in_code_and_conversation(agent):
    a = await agent(permissions="yolo", workflow={"autoVerifyAfterEdit": False})
    await _three_submissions(a, "rewind")
    listed = await a.s.execute("coder.input", {"text": "/rewind"})
    subs = listed["data"]["submissions"]
    assert [s["index"] for s in subs] == [1, 2, 3]
    assert (
        subs[0]["text"].startswith("first: make one.txt") and subs[2]["text"] == "!echo THREE rewind > three-rewind.txt"
    )
    assert sorted(subs[0]["files"]) == ["README.md", "one.txt"] and subs[1]["files"] == ["two-rewind.txt"]
    assert all(s["time"] for s in subs)

    result = await a.s.execute("coder.input", {"text": "/rewind 2"})  # --both by default
    assert result["status"] == "completed", result
    data = result["data"]
    assert sorted(data["removed"]) == ["three-rewind.txt", "two-rewind.txt"] and data["conflicts"] == []
    assert not (a.root / "two-rewind.txt").exists() and not (a.root / "three-rewind.txt").exists()
    assert (a.root / "one.txt").read_text() == "ONE rewind\n" and "SIDE" in (a.root / "README.md").read_text()
    assert data["messagesDropped"] > 0
    a.fake.push(reply("ok"))
    await a.turn("what did we do?")
    sent = all_text(requests(a.fake)[-1])
    assert "ALPHA-WORD" in sent and "BETA-WORD" not in sent and "rewound" in sent
    exported = await a.s.execute("coder.input", {"text": "/export --format md"})
    text = open(exported["data"]["path"]).read()  # noqa: ASYNC230
    assert "BETA-WORD" in text  # the log keeps what the rewind cut


async def test_rewind_code_keeps_what_the_user_changed_since_and_lists_it(agent):
    a = await agent(permissions="yolo", workflow={"autoVerifyAfterEdit": False})
    a.fake.push(_write("toolu_c1", "c.txt", "agent\n"), _write("toolu_c2", "d.txt", "agent\n"), reply("done"))
    await a.turn("make c.txt and d.txt GAMMA-WORD")
    (a.root / "c.txt").write_text("the user's own edit\n")
    result = await a.s.execute("coder.input", {"text": "/rewind 1 --code"})
    assert result["status"] == "completed", result
    assert result["data"]["conflicts"] == ["c.txt"] and result["data"]["removed"] == ["d.txt"]
    assert (a.root / "c.txt").read_text() == "the user's own edit\n"
    assert result["data"]["conversation"] is False
    a.fake.push(reply("ok"))
    await a.turn("next")
    assert "GAMMA-WORD" in all_text(requests(a.fake)[-1])  # --code leaves the conversation alone


async def test_rewind_conversation_across_compact_and_resume(agent):
    a = await agent()
    a.fake.push(reply("Noted the first."))
    await a.turn("first fact: DELTA-WORD")
    a.fake.push(reply("Noted the second."))
    sid = (await a.turn("second fact: EPSILON-WORD"))["sessionId"]
    a.fake.push(reply("- facts: DELTA-WORD, EPSILON-WORD"))
    assert (await a.s.execute("coder.compact", {}))["status"] == "completed"
    await a.s.execute("coder.new", {})
    assert (await a.s.execute("coder.resume", {"args": sid}))["status"] == "completed"
    listed = await a.s.execute("coder.rewind", {})
    assert [s["text"] for s in listed["data"]["submissions"]] == ["first fact: DELTA-WORD", "second fact: EPSILON-WORD"]
    result = await a.s.execute("coder.input", {"text": "/rewind 2 --conversation"})
    assert result["status"] == "completed" and result["data"]["code"] is False, result
    a.fake.push(reply("ok"))
    await a.turn("what do you know?")
    sent = all_text(requests(a.fake)[-1])
    # back to before submission 2: the first exchange whole (from the log, not the summary)
    assert "first fact: DELTA-WORD" in sent and "Noted the first." in sent
    assert "EPSILON-WORD" not in sent and "facts: DELTA-WORD" not in sent
    await a.s.execute("coder.new", {})  # and that cut context is what a /resume brings back
    await a.s.execute("coder.resume", {"args": sid})
    a.fake.push(reply("ok"))
    await a.turn("again?")
    assert "EPSILON-WORD" not in all_text(requests(a.fake)[-1])


async def test_rewind_arguments(agent):
    a = await agent()
    for bad in ("/rewind 1", "/rewind --code", "/rewind 1 --code --conversation", "/rewind x"):
        r = await a.s.execute("coder.input", {"text": bad})
        assert r["status"] == "failed" and r["error"]["code"] in ("unknown_submission", "invalid_argument"), (bad, r)


async def test_another_session_cannot_rewind_or_diff_this_ones_submissions(agent):
    a = await agent(permissions="yolo", workflow={"autoVerifyAfterEdit": False})
    a.fake.push(_write("toolu_i1", "mine-only.txt", "MINE\n"), reply("done"))
    await a.turn("make mine-only.txt")
    await a.s.execute("coder.new", {})  # another session in the same workspace
    listed = await a.s.execute("coder.rewind", {})
    assert listed["data"]["submissions"] == []
    for text in ("/rewind 1", "/rewind 1 --code", "/diff turn 1", "/diff turn"):
        r = await a.s.execute("coder.input", {"text": text})
        assert r["status"] == "failed" and r["error"]["code"] == "unknown_submission", (text, r)
    assert (a.root / "mine-only.txt").read_text() == "MINE\n"
