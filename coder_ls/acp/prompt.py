"""An ACP prompt (content blocks) as the engine's input: its text and its images.

Text blocks are the input as typed: `/command args` and `!cmd` work as over LSP. A resource
link names a file the model may read; an embedded text resource carries its text (an
editor's selection or an unsaved buffer): both follow the text, each in a fenced block
saying where it comes from. A shell command takes no attachment (bash would receive them
as text): that, audio (not offered in `promptCapabilities`), and a binary resource are
refused with a clear message, never dropped in silence. An image block (base64 `data`,
`mimeType`) is an image of `coder.input` (`ImageArg`): the engine checks it by its bytes
(`engine/images.py`) and refuses a bad one before anything is kept or sent.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from coder_ls.protocol.args import ImageArg


class BadPrompt(Exception):
    """The prompt cannot become input; the message says why and what to do."""


def _path(uri: str) -> str:
    return uri.removeprefix("file://")


class PromptInput(NamedTuple):
    text: str
    images: tuple[ImageArg, ...] = ()
    origin: Any = None  # `_meta.coder.origin` as sent (checked with the input); None: `typed`


def meta_origin(meta: dict[str, Any]) -> Any:
    """A prompt is what the user typed in their editor (`typed`, contract section 18), unless
    the client says otherwise in `_meta.coder.origin` (`client`, `link`, ...): a client that
    knows the text came from elsewhere (automation, a link) can only narrow what it may run."""
    coder = meta.get("coder")
    if coder is None:
        return None
    if not isinstance(coder, dict):
        raise BadPrompt('_meta.coder must be an object, e.g. {"origin": "client"}')
    return coder.get("origin")


def prompt_input(blocks: list[Any], meta: dict[str, Any] | None = None) -> PromptInput:
    text_parts: list[str] = []
    attached: list[str] = []
    images: list[ImageArg] = []
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
            case ImageContentBlock(data=data, mime_type=mime) if data:
                images.append(ImageArg(data=data, media_type=mime))
            case ImageContentBlock():
                raise BadPrompt("an image block needs its base64 `data`")
            case AudioContentBlock():
                raise BadPrompt("audio content is not supported (see promptCapabilities); send text")
            case _:
                raise BadPrompt(f"unknown content block {getattr(block, 'type', type(block).__name__)!r}")
    text = "".join(text_parts)
    if (attached or images) and text.lstrip().startswith("!"):
        raise BadPrompt("a shell command (`!cmd`) takes no attached files, resources or images: send the command alone")
    if attached:
        text = (text.rstrip() + "\n\n" if text.strip() else "") + "\n\n".join(attached)
    return PromptInput(text, tuple(images), meta_origin(meta or {}))
