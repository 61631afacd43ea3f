"""`@` references in a prompt and `coder.completeInput` (contract section 19).

The checks are the read tool's: outside the workspace, a deny rule, a FIFO or a symlink
out are not attached (a notice says why); an `@` that names nothing stays text.
"""

from __future__ import annotations

import asyncio
import os

import pytest
from agent_e2e import last_user_text, requests
from anthropic_images import image_blocks
from anthropic_server import reply
from pygls.exceptions import JsonRpcInvalidParams

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


async def sent(a, prompt: str, **settings) -> str:
    a.fake.push(reply("noted"))
    result = await a.turn(prompt)
    assert result["status"] == "completed", result
    return last_user_text(requests(a.fake)[-1])


async def test_a_file_a_range_and_a_folder_are_attached(agent):
    a = await agent()
    (a.root / "refs").mkdir(exist_ok=True)
    (a.root / "refs" / "one.py").write_text("".join(f"line {n}\n" for n in range(1, 31)))
    (a.root / "refs" / "two.py").write_text("TWO\n")
    (a.root / "refs" / "junk.log").write_text("ignored\n")
    (a.root / ".gitignore").write_text("*.log\n")

    text = await sent(a, "explain @refs/one.py please")
    assert "explain @refs/one.py please" in text
    assert "(Attached: refs/one.py)" in text and "line 1\n" in text and "line 30" in text

    text = await sent(a, "and @refs/one.py#L10-12, then")
    assert "(Attached: refs/one.py lines 10-12)" in text
    assert "line 10\nline 11\nline 12" in text and "line 13" not in text and "line 9\n" not in text

    text = await sent(a, "what is in @refs/?")
    assert "(Attached: the files under refs/)" in text
    assert "one.py" in text and "two.py" in text and "junk.log" not in text  # ignored as ls does


async def test_an_at_that_names_nothing_stays_text_and_nothing_is_attached(agent):
    a = await agent()
    prompt = "mail bob@example.com about @decorator and @github:issue/12 or @nowhere.py"
    text = await sent(a, prompt)
    assert prompt in text and "(Attached" not in text
    assert a.s.events_of("notice") == []


async def test_a_long_file_is_cut_with_a_note(agent):
    a = await agent()
    await a.configure({"permissions": "balanced", "input": {"maxAttachmentBytes": 1000}})
    (a.root / "long.txt").write_text("x" * 80 + "\n" * 1 + ("y" * 99 + "\n") * 100)
    text = await sent(a, "see @long.txt")
    assert "[cut at 1000 bytes (input.maxAttachmentBytes)" in text
    assert len(text) < 2000


async def test_references_that_the_read_rules_refuse_are_not_attached(agent, tmp_path):
    a = await agent()
    await a.configure(
        {"permissions": "balanced", "rules": [{"tool": "read", "action": "deny", "path": "private/**"}]}
    )
    outside = tmp_path / "outside-secret.txt"
    outside.write_text("OUTSIDE-SECRET\n")
    (a.root / "private").mkdir(exist_ok=True)
    (a.root / "private" / "key.txt").write_text("DENIED-SECRET\n")
    link = a.root / "link-out.txt"
    if not link.is_symlink():
        link.symlink_to(outside)
    fifo = a.root / "pipe.txt"
    if not fifo.exists():
        os.mkfifo(fifo)
    rel_out = "../" * len(a.root.relative_to(tmp_path.parent).parts) + str(outside.relative_to(tmp_path.parent))
    text = await sent(a, f"read @{outside} @{rel_out} @link-out.txt @private/key.txt @pipe.txt")
    assert "OUTSIDE-SECRET" not in text and "DENIED-SECRET" not in text and "(Attached" not in text
    notices = " ".join(e["message"] for e in a.s.events_of("notice"))
    assert "outside the workspace" in notices and "private/key.txt was not attached" in notices
    assert "pipe.txt was not attached" in notices


async def test_the_editor_buffer_is_attached_not_the_disk_and_an_image_as_an_image(agent):
    from test_e2e_images import png

    a = await agent()
    (a.root / "buf.py").write_text("ON DISK\n")
    a.s.open("buf.py", "UNSAVED EDIT\n")
    (a.root / "pic.png").write_bytes(png(30, 20))
    text = await sent(a, "compare @buf.py with @pic.png")
    assert "UNSAVED EDIT" in text and "ON DISK" not in text
    assert len(image_blocks(requests(a.fake)[-1].body)) == 1


async def test_complete_input_offers_files_folders_and_commands(agent):
    a = await agent()
    (a.root / "refs").mkdir(exist_ok=True)
    (a.root / "refs" / "complete_me.py").write_text("x\n")

    async def offered() -> dict:  # the list is refreshed in the background: a new file shows soon
        for _ in range(100):
            got = await a.s.execute("coder.completeInput", {"text": "look at @complete_m", "position": 19})
            if got["data"]["items"]:
                return got["data"]
            await asyncio.sleep(0.1)
        raise AssertionError("the new file was never offered")

    data = await offered()
    assert data["kind"] == "completions" and data["start"] == 8
    assert data["items"][0] == {"label": "@refs/complete_me.py", "kind": "file"}
    folders = await a.s.execute("coder.completeInput", {"text": "@ref"})
    assert {"label": "@refs/", "kind": "file"} in folders["data"]["items"]
    commands = await a.s.execute("coder.completeInput", {"text": "/he"})
    assert [i["label"] for i in commands["data"]["items"]] == ["/help"]
    plain = await a.s.execute("coder.completeInput", {"text": "no at here"})
    assert plain["data"]["items"] == []
    with pytest.raises(JsonRpcInvalidParams):
        await a.s.execute("coder.completeInput", {"text": "@x", "position": 9})
