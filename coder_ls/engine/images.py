"""Images the model sees: checked by content, fitted to the API's limits, stored once.

An image comes from the user (`coder.input {images}`: a file URI or base64 data) or from
the `read` tool (a screenshot in the repository). Either way it is:

- **checked by its bytes, not its name or declared type**: Pillow must recognise it as
  PNG, JPEG, GIF or WebP and decode it; anything else is `BadImage` (a clear error, the
  input not consumed). The declared `mediaType` is only a hint: the block sent to the
  model carries the type the bytes have (the API refuses a type that does not match);
- **fitted to the Messages API's limits** (https://docs.claude.com/en/docs/vision): at
  most 8000 px a side, 2000 px when a request carries more than 20 images, 5 MB per
  image, 100 images per request. Every stored image has its long edge scaled down to
  `MAX_SIDE` (1568 px, the size the API itself scales to, so nothing the model sees is
  lost) and is re-encoded until its base64 form is under `MAX_BASE64`. So any number of
  images stays within the many-image limit. A GIF keeps its first frame;
- **stored once by content hash** in `<root>/.coder/blobs/<sha256>.<ext>`; the session
  log keeps only the hash (`ImageBlock.data` is empty there), so `/resume` sees the same
  images and `/export` can copy them (`image_path`);
- **loaded only for the request** (`with_image_data`), newest first: when the context
  holds more than `MAX_IMAGES_PER_REQUEST`, the oldest become a one-line note, which is
  also how compaction drops old images first (`drop_old_images`).

Pillow refuses decompression bombs (an image whose pixel count is absurd for its size)
and we refuse more than `MAX_PIXELS` before decoding anything.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import struct
import warnings
import zlib
from pathlib import Path

from coder_ls import fsutil
from coder_ls.protocol.messages import Block, ImageBlock, Message, TextBlock, ToolResultBlock
from coder_ls.saferead import UnreadableFile, read_regular_file
from coder_ls.store.gitignore import ensure_state_dir, state_paths

MAX_SIDE = 1568  # px: the API scales a longer edge down to this anyway
MAX_BASE64 = 5 * 1024 * 1024  # the API's per-image limit, on the base64 text it receives
MAX_INPUT_BYTES = 50 * 1024 * 1024  # a file or a paste larger than this is not read
MAX_PIXELS = 100_000_000  # refused before decoding (a 10,000 x 10,000 screenshot is fine)
MAX_IMAGES_PER_REQUEST = 100
MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}
BLOBS_DIR_NAME = "blobs"


class BadImage(Exception):
    """An image that cannot be sent: not an image, not a type the API takes, unreadable."""


def blobs_dir(root: Path) -> Path:
    return state_paths(root).state_dir / BLOBS_DIR_NAME


def image_path(root: Path, sha256: str) -> Path | None:
    """The stored file of an image by its hash (for `/export`), or None when absent."""
    if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
        return None
    for ext in EXTENSIONS.values():
        path = blobs_dir(root) / f"{sha256}.{ext}"
        if path.is_file():
            return path
    return None


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_without_broken_extras(raw: bytes) -> bytes | None:
    """`raw` without the ancillary chunks (colour profile, text, EXIF...) whose checksum is
    wrong, as browsers read it; None when it is not a PNG or nothing was dropped.

    Real images carry such chunks (the MCP reference server's logo has a damaged `iCCP`);
    Pillow refuses the whole file, and the image itself (IHDR, PLTE, IDAT) is intact."""
    if not raw.startswith(PNG_SIGNATURE):
        return None
    out, at, dropped = [PNG_SIGNATURE], len(PNG_SIGNATURE), False
    while at + 12 <= len(raw):
        (length,) = struct.unpack(">I", raw[at : at + 4])
        end = at + 12 + length
        if end > len(raw):
            return None
        kind, body, (crc,) = raw[at + 4 : at + 8], raw[at + 8 : end - 4], struct.unpack(">I", raw[end - 4 : end])
        ancillary = bool(kind[0] & 0x20)
        if ancillary and zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            dropped = True
        else:
            out.append(raw[at:end])
        at = end
    return b"".join(out) if dropped else None


def fit(raw: bytes, name: str = "image") -> tuple[bytes, str, int, int]:
    """(bytes, media type, width, height) of `raw` made fit for the API; `BadImage` when
    it is not a PNG, JPEG, GIF or WebP image that decodes."""
    try:
        return _fit(raw, name)
    except BadImage:
        repaired = png_without_broken_extras(raw)
        if repaired is None:
            raise
        return _fit(repaired, name)


def _fit(raw: bytes, name: str) -> tuple[bytes, str, int, int]:
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            img: Image.Image = Image.open(io.BytesIO(raw))
            kind = img.format or ""
            if kind not in MEDIA_TYPES:
                raise BadImage(f"{name}: a {kind or 'file'} image is not sent to the model (PNG, JPEG, GIF, WebP)")
            width, height = img.size
            if width * height > MAX_PIXELS:
                raise BadImage(f"{name}: {width}x{height} pixels is too large to load")
            img.load()
    except UnidentifiedImageError:
        raise BadImage(f"{name}: not an image (PNG, JPEG, GIF or WebP), whatever its name or type says") from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise BadImage(f"{name}: refused as a decompression bomb (too many pixels for its size)") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise BadImage(f"{name}: the image is damaged and cannot be decoded ({exc})") from None
    media_type = MEDIA_TYPES[kind]
    if max(width, height) <= MAX_SIDE and _b64_len(len(raw)) <= MAX_BASE64:
        return raw, media_type, width, height
    if kind == "GIF" or img.mode not in ("RGB", "RGBA", "L", "LA"):
        img = img.convert("RGBA" if "A" in img.mode or "transparency" in img.info else "RGB")
        kind, media_type = ("PNG", "image/png") if kind in ("GIF", "PNG") else (kind, media_type)
    img.thumbnail((MAX_SIDE, MAX_SIDE))
    data = _encode(img, kind)
    if _b64_len(len(data)) > MAX_BASE64:  # a noisy PNG: JPEG is always small enough at this size
        data, media_type = _encode(img.convert("RGB"), "JPEG"), "image/jpeg"
    return data, media_type, img.width, img.height


def _encode(img: object, kind: str) -> bytes:
    out = io.BytesIO()
    options = {"quality": 85} if kind in ("JPEG", "WEBP") else {"optimize": True}
    img.save(out, format=kind, **options)  # type: ignore[attr-defined]
    return out.getvalue()


def _b64_len(n: int) -> int:
    return 4 * ((n + 2) // 3)


def store(root: Path, raw: bytes, name: str = "image") -> ImageBlock:
    """Check, fit and store an image; the block names it by hash (its `data` is empty)."""
    data, media_type, width, height = fit(raw, name)
    sha = hashlib.sha256(data).hexdigest()
    path = blobs_dir(root) / f"{sha}.{EXTENSIONS[media_type]}"
    if not path.is_file():
        ensure_state_dir(root)
        state = state_paths(root).state_dir
        fsutil.write_atomic(path, data, root=state, new_mode=0o600)
    return ImageBlock(media_type=media_type, sha256=sha, width=width, height=height, name=name)


def decode_base64(data: str, name: str) -> bytes:
    if len(data) > _b64_len(MAX_INPUT_BYTES):
        raise BadImage(f"{name}: more than {MAX_INPUT_BYTES // (1024 * 1024)} MB: not read")
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise BadImage(f"{name}: `data` is not valid base64") from None


def read_image_file(path: Path, name: str) -> bytes:
    """A regular file's bytes (never a FIFO or a device); `BadImage` otherwise."""
    try:
        raw = read_regular_file(path, MAX_INPUT_BYTES)
    except UnreadableFile as exc:
        raise BadImage(f"{name}: {exc}") from None
    if raw is None:
        raise BadImage(f"{name}: no such file")
    return raw


def load(root: Path, block: ImageBlock) -> ImageBlock | None:
    """The block with its base64 `data`, or None when its file is gone."""
    if block.data:
        return block
    path = image_path(root, block.sha256)
    if path is None:
        return None
    try:
        raw = read_regular_file(path, 2 * MAX_BASE64)
    except UnreadableFile:
        return None
    if raw is None:
        return None
    return ImageBlock(
        media_type=block.media_type,
        sha256=block.sha256,
        width=block.width,
        height=block.height,
        name=block.name,
        data=base64.b64encode(raw).decode("ascii"),
    )


def placeholder(block: ImageBlock, why: str) -> TextBlock:
    return TextBlock(text=f"[image {block.name or block.sha256[:12]} ({block.width}x{block.height}): {why}]")


def drop_old_images(messages: list[Message], keep: int, why: str = "dropped to save context") -> list[Message]:
    """The messages with all but the newest `keep` images replaced by a one-line note
    (in user content and in tool results). Compaction calls this before summarising."""
    seen = 0
    out: list[Message] = []
    for message in reversed(messages):
        content: list[Block] = []
        for block in reversed(message.content):
            if isinstance(block, ImageBlock):
                seen += 1
                content.append(block if seen <= keep else placeholder(block, why))
            elif isinstance(block, ToolResultBlock) and block.images:
                kept: list[ImageBlock] = []
                notes: list[str] = []
                for image in reversed(block.images):
                    seen += 1
                    if seen <= keep:
                        kept.append(image)
                    else:
                        notes.append(placeholder(image, why).text)
                text = "\n".join([block.content, *notes]) if notes else block.content
                content.append(ToolResultBlock(block.tool_use_id, text, block.is_error, images=list(reversed(kept))))
            else:
                content.append(block)
        out.append(Message(role=message.role, content=list(reversed(content))))
    return list(reversed(out))


def with_image_data(root: Path, messages: list[Message], keep: int = MAX_IMAGES_PER_REQUEST) -> list[Message]:
    """The messages as a request carries them: at most `keep` images (the newest), each
    with its data loaded; an image whose stored file is gone becomes a note."""
    if not any(has_images(m) for m in messages):
        return messages
    out: list[Message] = []
    for message in drop_old_images(messages, keep, "left out: too many images for one request"):
        content: list[Block] = []
        for block in message.content:
            if isinstance(block, ImageBlock):
                loaded = load(root, block)
                content.append(loaded if loaded is not None else placeholder(block, "no longer stored"))
            elif isinstance(block, ToolResultBlock) and block.images:
                images = [(i, load(root, i)) for i in block.images]
                gone = [placeholder(i, "no longer stored").text for i, got in images if got is None]
                text = "\n".join([block.content, *gone]) if gone else block.content
                ready = [got for _, got in images if got is not None]
                content.append(ToolResultBlock(block.tool_use_id, text, block.is_error, images=ready))
            else:
                content.append(block)
        out.append(Message(role=message.role, content=content))
    return out


def has_images(message: Message) -> bool:
    """The message holds an image (its own, or in a tool result)."""
    return any(isinstance(b, ImageBlock) or (isinstance(b, ToolResultBlock) and b.images) for b in message.content)


def count_images(messages: list[Message]) -> int:
    return sum(
        1 if isinstance(b, ImageBlock) else len(b.images) if isinstance(b, ToolResultBlock) else 0
        for m in messages
        for b in m.content
    )
