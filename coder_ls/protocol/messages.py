"""The conversation as the engine keeps it (provider-neutral)."""

from __future__ import annotations

from typing import Any, Literal

import msgspec


class TextBlock(msgspec.Struct, tag_field="type", tag="text"):
    text: str


class ThinkingBlock(msgspec.Struct, tag_field="type", tag="thinking"):
    thinking: str
    signature: str = ""


class ToolUseBlock(msgspec.Struct, tag_field="type", tag="tool_use"):
    id: str
    name: str
    input: dict[str, Any]


class ImageBlock(msgspec.Struct, tag_field="type", tag="image"):
    """An image the model sees. Stored once by content hash (`engine/images.py`); the log
    keeps only the hash, and `data` (base64) is filled in on the way to the provider."""

    media_type: str
    sha256: str
    width: int
    height: int
    name: str = ""  # where it came from (a file name, "pasted image"), for placeholders
    data: str = ""


class ToolResultBlock(msgspec.Struct, tag_field="type", tag="tool_result", omit_defaults=True):
    tool_use_id: str
    content: str
    is_error: bool = False
    images: list[ImageBlock] = msgspec.field(default_factory=list)  # e.g. `read` of a PNG


Block = TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock | ImageBlock


class Message(msgspec.Struct):
    role: Literal["user", "assistant"]
    content: list[Block]

    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))
