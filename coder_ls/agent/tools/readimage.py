"""The `read` tool on an image file: the model gets the image itself, not "binary file".

The first bytes route the file here (PNG, JPEG, GIF or WebP signatures); Pillow then
decides (`engine/images.py`): a file that only starts like an image is a clear error.
The image is fitted to the API's limits and stored by hash like a pasted one.
"""

from __future__ import annotations

import os
from pathlib import Path

from coder_ls.agent.tools.base import ToolError, ToolOutput
from coder_ls.engine.images import BadImage, read_image_file, store
from coder_ls.saferead import UnreadableFile, open_regular

SIGNATURES = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a")


def looks_like_image(head: bytes) -> bool:
    return head.startswith(SIGNATURES) or (head[:4] == b"RIFF" and head[8:12] == b"WEBP")


def read_image(root: Path, rel: str, path: Path) -> ToolOutput | None:
    """The image at `path` as a tool output, or None when the file is not an image (then
    `read` shows it as text). Blocking: run in a worker thread."""
    try:
        opened = open_regular(path)
    except UnreadableFile:
        return None  # `read` says why
    if opened is None:
        return None
    fd = opened[0]
    try:
        head = os.read(fd, 16)
    except OSError:
        return None
    finally:
        os.close(fd)
    if not looks_like_image(head):
        return None
    try:
        block = store(root, read_image_file(path, rel), rel)
    except BadImage as exc:
        raise ToolError(str(exc)) from None
    kind = block.media_type.removeprefix("image/").upper()
    return ToolOutput(
        f"{rel}: {kind} image, {block.width}x{block.height} px (shown to you as an image).", images=(block,)
    )
