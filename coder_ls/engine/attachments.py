"""What comes with a prompt besides its text: its images and its long pastes (the `@`
references are the agent's, `agent/references.py`: they follow the `read` tool's rules).

A failure here never loses the input: the submission fails with `bad_image` and its
result carries the text (`data.input`), so a client can put it back in the input box.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from coder_ls.engine.codeaction import path_of
from coder_ls.engine.images import BadImage, decode_base64, read_image_file, store
from coder_ls.engine.results import ResultBuilder
from coder_ls.protocol.actions import Paste
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


PASTE_MARK = re.compile(r"\[Pasted text #(\d+)\]")


def place_pastes(text: str, pastes: tuple[str, ...], threshold: int) -> tuple[str, tuple[Paste, ...]]:
    """(the prompt as the user sees it, the long pastes). Each paste N replaces its marker
    `[Pasted text #N]` in `text` (or is added at the end when `text` has none): a short
    one as itself, a long one (over `threshold` characters) as `[Pasted text #N, L lines]`,
    which `paste_for_model` fills in for the model."""
    long: list[Paste] = []

    def shown(n: int) -> str:
        paste = pastes[n - 1]
        if len(paste) <= threshold:
            return paste
        long.append(Paste(number=n, text=paste))
        return f"[Pasted text #{n}, {len(paste.splitlines())} lines]"

    named = {int(m.group(1)) for m in PASTE_MARK.finditer(text)}
    out = PASTE_MARK.sub(lambda m: shown(int(m.group(1))) if 1 <= int(m.group(1)) <= len(pastes) else m.group(0), text)
    for n in range(1, len(pastes) + 1):
        if n not in named:
            out = f"{out}\n{shown(n)}" if out else shown(n)
    return out, tuple(sorted(long, key=lambda p: p.number))


def paste_for_model(text: str, pastes: tuple[Paste, ...]) -> str:
    """The prompt with each long paste whole after its `[Pasted text #N, L lines]`."""
    for paste in pastes:
        lines = len(paste.text.splitlines())
        marker = f"[Pasted text #{paste.number}, {lines} lines]"
        whole = f'{marker}\n<pasted-text n="{paste.number}">\n{paste.text}\n</pasted-text>'
        text = text.replace(marker, whole, 1)
    return text


_PASTED = re.compile(r'\n<pasted-text n="\d+">\n.*?\n</pasted-text>', re.DOTALL)


def collapse_pastes(text: str) -> str:
    """A stored prompt as the transcript shows it: each long paste as its marker only."""
    return _PASTED.sub("", text) if "<pasted-text" in text else text
