"""An ACP prompt (content blocks) as the engine's input text.

Text blocks are the input as typed: `/command args` and `!cmd` work as over LSP. A resource
link names a file the model may read; an embedded text resource carries its text (an
editor's selection or an unsaved buffer): both follow the text, each in a fenced block
saying where it comes from. A shell command takes no attachment (bash would receive them
as text): that, images and audio (not offered in `promptCapabilities`), and a binary
resource are refused with a clear message, never dropped in silence.
"""

from __future__ import annotations

from typing import Any

from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)


class BadPrompt(Exception):
    """The prompt cannot become input; the message says why and what to do."""


def _path(uri: str) -> str:
    return uri.removeprefix("file://")


def prompt_text(blocks: list[Any]) -> str:
    text_parts: list[str] = []
    attached: list[str] = []
    for block in blocks:
        match block:
            case TextContentBlock(text=text):
                text_parts.append(text)
            case ResourceContentBlock(uri=uri, name=name):
                attached.append(f"Attached file: {_path(uri)} ({name}); read it if you need it.")
            case EmbeddedResourceContentBlock(resource=TextResourceContents(uri=uri, text=text)):
                fence = "````" if "```" in text else "```"
                attached.append(f"Attached {_path(uri)}:\n{fence}\n{text}\n{fence}")
            case EmbeddedResourceContentBlock(resource=BlobResourceContents(uri=uri)):
                raise BadPrompt(f"{uri}: a binary resource cannot be attached; attach text files only")
            case ImageContentBlock() | AudioContentBlock():
                raise BadPrompt(f"{block.type} content is not supported yet (see promptCapabilities); send text")
            case _:
                raise BadPrompt(f"unknown content block {getattr(block, 'type', type(block).__name__)!r}")
    text = "".join(text_parts)
    if not attached:
        return text
    if text.lstrip().startswith("!"):
        raise BadPrompt("a shell command (`!cmd`) takes no attached files or resources: send the command alone")
    return (text.rstrip() + "\n\n" if text.strip() else "") + "\n\n".join(attached)
