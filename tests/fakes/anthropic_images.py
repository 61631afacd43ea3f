"""What the real Messages API refuses in image blocks, for the strict fake.

From https://docs.claude.com/en/docs/vision ("Basics and Limits") and the API's 400
answers users report:

- an image source is `{type: base64, media_type, data}` with `media_type` one of
  image/jpeg, image/png, image/gif, image/webp;
- the bytes must be an image of that type ("Image does not match the provided media
  type");
- at most 5 MB per image (the base64 text the API receives);
- at most 8000 px a side; when a request carries more than 20 images, 2000 px;
- at most 100 images per request (models with a 200k-token window; 600 for others:
  the fake holds every model to 100, the stricter).

Images may sit in a user message or inside a `tool_result`'s content list. The fake
reads the bytes with Pillow, as the API decodes them.
"""

from __future__ import annotations

import base64
import binascii
import io
from collections.abc import Iterator
from typing import Any

MEDIA_TYPES = {"image/jpeg": "JPEG", "image/png": "PNG", "image/gif": "GIF", "image/webp": "WEBP"}
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_SIDE = 8000
MAX_SIDE_MANY = 2000
MANY_IMAGES = 20
MAX_IMAGES = 100


def _images(messages: list[Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for j, block in enumerate(content):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "image":
                yield f"messages.{i}.content.{j}.image", block
            inner = block.get("content") if block.get("type") == "tool_result" else None
            if isinstance(inner, list):
                for k, part in enumerate(inner):
                    if isinstance(part, dict) and part.get("type") == "image":
                        yield f"messages.{i}.content.{j}.content.{k}.image", part


def _check_one(where: str, block: dict[str, Any], many: bool) -> str | None:
    from PIL import Image

    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64":
        return f"{where}.source: Input tag does not match any of the expected tags: 'base64', 'url', 'file'"
    media_type, data = source.get("media_type"), source.get("data")
    if media_type not in MEDIA_TYPES:
        return (
            f"{where}.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"
        )
    if not isinstance(data, str) or not data:
        return f"{where}.source.base64.data: image cannot be empty"
    if len(data) > MAX_IMAGE_BYTES:
        return f"{where}.source.base64: image exceeds 5 MB maximum: {len(data)} bytes > {MAX_IMAGE_BYTES} bytes"
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return f"{where}.source.base64.data: invalid base64 data"
    try:
        img = Image.open(io.BytesIO(raw))
        kind, (width, height) = img.format, img.size
    except Exception:
        return f"{where}.source.base64.data: Could not process image"
    if MEDIA_TYPES[media_type] != kind:
        return f"{where}.source.base64.data: Image does not match the provided media type {media_type}"
    if max(width, height) > MAX_SIDE:
        return (
            f"{where}.source.base64.data: At least one of the image dimensions exceed max allowed size: "
            f"{MAX_SIDE} pixels"
        )
    if many and max(width, height) > MAX_SIDE_MANY:
        return (
            f"{where}.source.base64.data: At least one of the image dimensions exceed max allowed size "
            f"for many-image requests: {MAX_SIDE_MANY} pixels"
        )
    return None


def check_images(messages: list[Any]) -> str | None:
    """None when every image of the request is one the real API takes, else its 400."""
    found = list(_images(messages))
    if len(found) > MAX_IMAGES:
        return f"messages: Too many images in the request: {len(found)} > {MAX_IMAGES}"
    many = len(found) > MANY_IMAGES
    for where, block in found:
        problem = _check_one(where, block, many)
        if problem is not None:
            return problem
    return None


def image_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every image block of a recorded request (for tests to look at)."""
    return [block for _, block in _images(body.get("messages") or [])]
