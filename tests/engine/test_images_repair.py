"""A PNG whose extras (a colour profile, text) have a wrong checksum is still an image, as
browsers and the MCP reference server's own logo have it; a damaged picture is not."""

from __future__ import annotations

import io
import struct
import zlib

import pytest
from PIL import Image

from coder_ls.engine.images import BadImage, fit, png_without_broken_extras


def _png(size: tuple[int, int] = (6, 4)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, "blue").save(buf, "PNG")
    return buf.getvalue()


def _chunk(kind: bytes, body: bytes, crc: int | None = None) -> bytes:
    crc = zlib.crc32(kind + body) & 0xFFFFFFFF if crc is None else crc
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)


def _with_chunk_after_ihdr(png: bytes, chunk: bytes) -> bytes:
    at = 8 + 12 + 13  # the signature, then IHDR (13 bytes of body)
    return png[:at] + chunk + png[at:]


def test_a_png_with_a_damaged_profile_is_read_without_it() -> None:
    broken = _with_chunk_after_ihdr(_png(), _chunk(b"iCCP", b"profile\x00\x00garbage", crc=1234))
    with pytest.raises(Exception):  # noqa: B017 - Pillow itself refuses it
        Image.open(io.BytesIO(broken)).load()
    data, media_type, width, height = fit(broken, "logo.png")
    assert (media_type, width, height) == ("image/png", 6, 4)
    assert b"iCCP" not in data and Image.open(io.BytesIO(data)).size == (6, 4)


def test_a_png_with_damaged_pixels_is_refused() -> None:
    png = _png()
    at = png.index(b"IDAT") - 4
    (length,) = struct.unpack(">I", png[at : at + 4])
    body = bytearray(png[at + 8 : at + 8 + length])
    body[2] ^= 0xFF
    broken = png[:at] + _chunk(b"IDAT", bytes(body), crc=0) + png[at + 12 + length :]
    assert png_without_broken_extras(broken) is None  # a critical chunk is never dropped
    with pytest.raises(BadImage):
        fit(broken, "shot.png")


def test_nothing_is_dropped_from_a_sound_png_or_from_what_is_not_a_png() -> None:
    assert png_without_broken_extras(_png()) is None
    assert png_without_broken_extras(b"GIF89a" + b"\x00" * 20) is None
