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


class ToolImage(msgspec.Struct, frozen=True):
    """An image a tool returned (an MCP server's), base64, sent to the model beside the text."""

    media_type: str
    data: str


class ToolResultBlock(msgspec.Struct, tag_field="type", tag="tool_result", omit_defaults=True):
    tool_use_id: str
    content: str
    is_error: bool = False
    images: list[ToolImage] = msgspec.field(default_factory=list)


Block = TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock


class Message(msgspec.Struct):
    role: Literal["user", "assistant"]
    content: list[Block]

    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))
