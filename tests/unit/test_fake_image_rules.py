"""The strict fake refuses the images the real Messages API refuses (its rules must be
able to fail, or the image e2e tests prove nothing)."""

from __future__ import annotations

import base64
import io

from anthropic_rules import check_request
from PIL import Image


def image(width: int, height: int, kind: str = "PNG") -> str:
    out = io.BytesIO()
    Image.new("RGB", (width, height)).save(out, format=kind)
    return base64.b64encode(out.getvalue()).decode()


def body(*blocks: dict) -> dict:
    content = [*blocks, {"type": "text", "text": "see"}]
    return {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": [{"role": "user", "content": content}]}


def block(data: str, media_type: str = "image/png") -> dict:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def test_a_good_image_passes():
    assert check_request(body(block(image(100, 100)))) is None


def test_a_media_type_that_does_not_match_the_bytes_is_refused():
    problem = check_request(body(block(image(10, 10, "JPEG"), "image/png")))
    assert problem is not None and "does not match the provided media type image/png" in problem


def test_an_unsupported_type_and_bytes_that_are_no_image_are_refused():
    assert "media_type" in (check_request(body(block(image(10, 10, "BMP"), "image/bmp"))) or "")
    assert check_request(body(block(base64.b64encode(b"hello").decode()))) is not None


def test_over_5_mb_is_refused():
    problem = check_request(body(block("A" * (5 * 1024 * 1024 + 4))))
    assert problem is not None and "exceeds 5 MB" in problem


def test_over_8000_px_and_over_2000_px_with_many_images_are_refused():
    assert "8000" in (check_request(body(block(image(8001, 10)))) or "")
    assert check_request(body(*[block(image(2001, 10))] * 20)) is None
    assert "many-image" in (check_request(body(*[block(image(2001, 10))] * 21)) or "")


def test_more_than_100_images_are_refused_also_inside_tool_results():
    small = block(image(4, 4))
    assert check_request(body(*[small] * 100)) is None
    assert "Too many images" in (check_request(body(*[small] * 101)) or "")
    request = {
        "model": "m",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read", "input": {}}]},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [{"type": "text", "text": "x"}, block(image(8001, 2))],
                    }
                ],
            },
        ],
    }
    assert "content.0.content.1.image" in (check_request(request) or "")
