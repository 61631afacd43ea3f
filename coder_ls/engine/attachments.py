"""What comes with a prompt besides its text: images now, references and pastes beside.

A failure here never loses the input: the submission fails with `bad_image` and its
result carries the text (`data.input`), so a client can put it back in the input box.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from coder_ls.engine.codeaction import path_of
from coder_ls.engine.images import BadImage, decode_base64, read_image_file, store
from coder_ls.engine.results import ResultBuilder
from coder_ls.protocol.args import ImageArg
from coder_ls.protocol.messages import ImageBlock
from coder_ls.protocol.results import InputData

MAX_IMAGES_PER_INPUT = 20  # more in one message is a mistake; the API takes 100 per request


def _load_one(root: Path, n: int, image: ImageArg) -> ImageBlock:
    if image.uri is not None:
        path = path_of(image.uri)
        name = path.name or f"image {n + 1}"
        if not path.is_absolute():
            raise BadImage(f"image {n + 1}: {image.uri!r} is not a file URI")
        return store(root, read_image_file(path, name), name)
    name = f"pasted image {n + 1}"
    return store(root, decode_base64(image.data or "", name), name)


def load_images(root: Path, images: tuple[ImageArg, ...]) -> tuple[ImageBlock, ...]:
    """Every image checked, fitted and stored; `BadImage` names the first bad one."""
    if len(images) > MAX_IMAGES_PER_INPUT:
        raise BadImage(f"{len(images)} images in one input: at most {MAX_IMAGES_PER_INPUT}")
    return tuple(_load_one(root, n, image) for n, image in enumerate(images))


async def attach_images(
    root: Path, text: str, images: tuple[ImageArg, ...], b: ResultBuilder
) -> tuple[ImageBlock, ...] | None:
    """The stored images, or None after failing the result with `bad_image` (the input
    kept in `data.input`)."""
    if not images:
        return ()
    try:
        return await asyncio.to_thread(load_images, root, images)
    except BadImage as exc:
        refuse_images(text, images, b, f"{exc}. Nothing was sent; the input is kept.")
        return None


def refuse_images(text: str, images: tuple[ImageArg, ...], b: ResultBuilder, message: str) -> None:
    b.fail("bad_image", message)
    b.data = InputData(input=text, images=len(images))
