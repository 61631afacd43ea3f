"""`/export`'s Markdown of a log (engine/export.py), below the end-to-end tests: image blocks
of any layer become files, fences survive backticks in tool output."""

from __future__ import annotations

import base64

import msgspec

from coder_ls.engine.export import to_markdown
from coder_ls.protocol.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from coder_ls.store import log as slog

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


class ImageBlock(msgspec.Struct, tag_field="type", tag="image"):
    """Stands in for the image block another layer defines (only its tag is relied on)."""

    media_type: str = ""
    data: str = ""
    hash: str = ""


def _loaded(*messages: Message) -> slog.LoadedSession:
    header = slog.Header(version=1, id="s1", created_at=1795316580.0, cwd="/ws")
    entries: list[slog.Entry] = [slog.MessageEntry(message=m, submission_id="sub", ts=1795316580.0) for m in messages]
    return slog._load(header, entries, skipped=0, torn=False, size=0)


def test_inline_and_stored_images_become_files_beside_the_export():
    inline = ImageBlock(media_type="image/png", data=base64.b64encode(PNG).decode())
    stored = ImageBlock(media_type="image/png", hash="abc123")
    missing = ImageBlock(media_type="image/png", hash="nope")
    message = Message(role="user", content=[TextBlock(text="look"), inline, stored, missing])  # type: ignore[list-item]
    blobs = {"abc123": PNG + b"2"}
    out = to_markdown(_loaded(message), "UTC", "s1.files", blobs.get)
    assert len(out.images) == 2 and PNG in out.images.values() and PNG + b"2" in out.images.values()
    for name in out.images:
        assert name.endswith(".png") and f"![image](s1.files/{name})" in out.text
    assert "*[an image, not stored]*" in out.text


def test_tool_output_with_backticks_keeps_its_fence_and_edits_show_as_a_diff():
    call = ToolUseBlock(id="t1", name="edit", input={"path": "a.py", "oldString": "x = 1", "newString": "x = 2"})
    result = ToolResultBlock(tool_use_id="t1", content="```\nnot a fence end\n```")
    out = to_markdown(_loaded(Message(role="user", content=[TextBlock(text="go")]),
                              Message(role="assistant", content=[call]), Message(role="user", content=[result])),
                      "UTC", "f", lambda _: None)  # fmt: skip
    assert "````\n```\nnot a fence end\n```\n````" in out.text
    assert "-x = 1" in out.text and "+x = 2" in out.text and "oldString" not in out.text
