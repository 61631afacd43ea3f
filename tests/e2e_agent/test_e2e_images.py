"""Images in, section 19: `coder.input {images}` and the `read` tool on an image file.

The strict fake refuses what the real Messages API refuses in images
(tests/fakes/anthropic_images.py): a type that does not match the bytes, over 5 MB,
over 8000 px (2000 px with more than 20 images), more than 100 images per request.
"""

from __future__ import annotations

import base64
import io
import os
import random

import pytest
from agent_e2e import calls, last_user_text, requests, tool_call
from anthropic_images import image_blocks
from anthropic_server import reply
from PIL import Image

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


def png(width: int, height: int, color: tuple[int, int, int] = (200, 30, 30), kind: str = "PNG") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), color).save(out, format=kind)
    return out.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def sent_image(block: dict) -> Image.Image:
    img = Image.open(io.BytesIO(base64.b64decode(block["source"]["data"])))
    assert {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}[img.format] == block[
        "source"
    ]["media_type"]
    return img


async def test_a_pasted_image_goes_to_the_model_with_the_text(agent):
    a = await agent()
    a.fake.push(reply("a red square"))
    result = await a.turn("what is this?", images=[{"data": b64(png(40, 30)), "mediaType": "image/png"}])
    assert result["status"] == "completed", result
    request = requests(a.fake)[0]
    content = request.body["messages"][-1]["content"]
    assert [b["type"] for b in content][:2] == ["image", "text"]
    assert sent_image(content[0]).size == (40, 30)
    assert "what is this?" in last_user_text(request)


async def test_a_declared_type_that_lies_is_corrected_by_the_bytes(agent):
    """JPEG bytes declared as PNG (a client guessing from a file name): the API would
    refuse the mismatch; the block carries the type the bytes have."""
    a = await agent()
    a.fake.push(reply("ok"))
    jpeg = png(64, 64, kind="JPEG")
    result = await a.turn("see", images=[{"data": b64(jpeg), "mediaType": "image/png"}])
    assert result["status"] == "completed", result
    (block,) = image_blocks(requests(a.fake)[0].body)
    assert block["source"]["media_type"] == "image/jpeg"


async def test_images_over_the_api_limits_are_scaled_down(agent):
    """9000 px wide (over 8000) and a 1500x1500 noise PNG of ~6.7 MB (over 5 MB): both
    are fitted; the request is one the API takes."""
    a = await agent()
    rng = random.Random(7)
    noise = Image.frombytes("RGB", (1500, 1500), rng.randbytes(1500 * 1500 * 3))
    out = io.BytesIO()
    noise.save(out, format="PNG")
    assert len(out.getvalue()) > 5 * 1024 * 1024
    a.fake.push(reply("two images"))
    result = await a.turn(
        "compare",
        images=[
            {"data": b64(png(9000, 300)), "mediaType": "image/png"},
            {"data": b64(out.getvalue()), "mediaType": "image/png"},
        ],
    )
    assert result["status"] == "completed", result
    wide, big = image_blocks(requests(a.fake)[0].body)
    assert sent_image(wide).size == (1568, 52)
    assert len(big["source"]["data"]) <= 5 * 1024 * 1024 and sent_image(big).size == (1500, 1500)


@pytest.mark.parametrize(
    "image",
    [
        {"data": b64(b"just some text, not an image"), "mediaType": "image/png"},
        {"data": "not base64 at all!", "mediaType": "image/png"},
        {"data": b64(png(10, 10, kind="BMP")), "mediaType": "image/bmp"},
        {"data": b64(png(50, 50)[:60]), "mediaType": "image/png"},  # cut short
        {"uri": "file:///dev/zero"},
        {"uri": "file:///nonexistent/shot.png"},
    ],
    ids=["text", "base64", "bmp", "truncated", "device", "missing"],
)
async def test_a_bad_image_fails_clearly_and_the_input_is_kept(agent, image):
    a = await agent()
    result = await a.turn("look at this please", images=[image])
    assert result["status"] == "failed", result
    assert result["error"]["code"] == "bad_image", result
    assert result["data"] == {"kind": "input", "input": "look at this please", "images": 1}
    assert requests(a.fake) == []  # nothing reached the model
    a.fake.push(reply("fine"))
    again = await a.turn("look at this please")  # the session is untouched
    assert again["status"] == "completed" and "fine" in again["reply"]
    assert len(requests(a.fake)[0].body["messages"]) == 1


async def test_a_fifo_and_a_decompression_bomb_are_refused(agent):
    a = await agent()
    fifo = a.root / "pipe.png"
    os.mkfifo(fifo)
    try:
        result = await a.turn("hm", images=[{"uri": fifo.as_uri()}])
        assert result["error"]["code"] == "bad_image", result
    finally:
        fifo.unlink()
    bomb = io.BytesIO()
    Image.new("1", (20000, 20000)).save(bomb, format="PNG")  # 400 Mpx in a few KB
    result = await a.turn("hm", images=[{"data": b64(bomb.getvalue()), "mediaType": "image/png"}])
    assert result["error"]["code"] == "bad_image", result
    assert requests(a.fake) == []


async def test_an_image_file_by_uri_and_the_read_tool_show_the_image(agent):
    a = await agent(permissions="yolo")
    (a.root / "shot.png").write_bytes(png(300, 200, (0, 0, 255)))
    a.fake.push(reply("blue"))
    result = await a.turn("what colour?", images=[{"uri": (a.root / "shot.png").as_uri()}])
    assert result["status"] == "completed", result
    (block,) = image_blocks(requests(a.fake)[0].body)
    assert sent_image(block).getpixel((5, 5)) == (0, 0, 255)

    a.fake.push(calls(tool_call("read", {"path": "shot.png"}, "toolu_img1")), reply("it is blue"))
    result = await a.turn("read shot.png")
    assert result["status"] == "completed", result
    last = requests(a.fake)[-1].body["messages"][-1]["content"]
    (tool_result,) = [b for b in last if b["type"] == "tool_result"]
    kinds = [part["type"] for part in tool_result["content"]]
    assert kinds == ["text", "image"], tool_result
    assert "300x200" in tool_result["content"][0]["text"]


async def test_images_are_stored_once_and_come_back_after_resume(agent):
    a = await agent()
    data = png(20, 20, (1, 2, 3))
    a.fake.push(reply("one"), reply("two"))
    first = await a.turn("first", images=[{"data": b64(data), "mediaType": "image/png"}])
    await a.turn("second", images=[{"data": b64(data), "mediaType": "image/png"}])
    blobs = list((a.root / ".coder" / "blobs").iterdir())
    assert len([p for p in blobs if p.suffix == ".png"]) >= 1
    log = (a.root / ".coder" / "sessions" / f"{first['sessionId']}.jsonl").read_text()
    assert b64(data) not in log  # the log names the image by hash only

    await a.s.execute("coder.new", {})
    resumed = await a.s.execute("coder.resume", {"args": first["sessionId"]})
    assert resumed["status"] == "completed", resumed
    a.fake.push(reply("three"))
    await a.turn("third")
    images = image_blocks(requests(a.fake)[-1].body)
    assert len(images) == 2 and all(sent_image(i).getpixel((0, 0)) == (1, 2, 3) for i in images)


async def test_more_images_than_a_request_may_carry_drop_the_oldest(agent):
    """Six inputs of 20 images each (2100 px wide: over the many-image limit unless
    scaled): the requests stay within 100 images and 2000 px; the oldest become notes."""
    a = await agent()
    for n in range(6):
        a.fake.push(reply(f"seen {n}"))
        images = [{"data": b64(png(2100, 10, (n, k, 0))), "mediaType": "image/png"} for k in range(20)]
        result = await a.turn(f"batch {n}", images=images)
        assert result["status"] == "completed", result
    body = requests(a.fake)[-1].body
    assert len(image_blocks(body)) == 100
    assert "too many images for one request" in str(body["messages"][0])
    assert sent_image(image_blocks(body)[-1]).getpixel((0, 0)) == (5, 19, 0)


async def test_images_with_a_command_or_a_shell_line_are_refused_and_kept(agent):
    a = await agent()
    image = {"data": b64(png(10, 10)), "mediaType": "image/png"}
    for text in ("/help", "!echo hi"):
        result = await a.turn(text, images=[image])
        assert result["error"]["code"] == "bad_image", result
        assert result["data"] == {"kind": "input", "input": text, "images": 1}
    assert a.s.events_of("shellOutput") == []  # the shell line did not run
