"""One writer per file. A file open in the editor is the client's (its buffer gets the
edit, the client saves it); a file that was not open is the server's: it writes the disk
before `editApplied`, and the event says `onDisk: true` so the client does not save the
copy it loaded to apply the edit (that save raced the server's write)."""

from __future__ import annotations

import pytest
from agent_e2e import calls, tool_call
from anthropic_server import reply

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


async def test_a_file_that_was_not_open_is_written_by_the_server_only(agent):
    a = await agent(permissions="yolo")
    (a.root / "closed.txt").write_text("old line\n")
    seen_on_disk: list[str] = []
    original = a.s.answer_edit

    def answer(params):
        seen_on_disk.append((a.root / "closed.txt").read_text())  # the server has not written yet
        return original(params)

    a.s.answer_edit = answer
    a.fake.push(
        calls(tool_call("edit", {"path": "closed.txt", "oldString": "old", "newString": "new"}, "t1")), reply("ok")
    )
    result = await a.turn("edit it")
    assert result["status"] == "completed", result
    assert seen_on_disk == ["old line\n"]  # the client got the edit before any disk write
    (event,) = a.s.events_of("editApplied")
    assert event["applied"] is True and event["onDisk"] is True, event
    assert (a.root / "closed.txt").read_text() == "new line\n"


async def test_a_file_open_in_the_editor_is_left_to_the_client(agent):
    a = await agent(permissions="yolo")
    (a.root / "opened.txt").write_text("old line\n")
    a.s.open("opened.txt", "old line\n", version=1)
    a.fake.push(
        calls(tool_call("edit", {"path": "opened.txt", "oldString": "old", "newString": "new"}, "t1")), reply("ok")
    )
    result = await a.turn("edit it")
    assert result["status"] == "completed", result
    (event,) = a.s.events_of("editApplied")
    assert event["applied"] is True and event["onDisk"] is False, event
    assert (a.root / "opened.txt").read_text() == "old line\n"  # the server did not write it
