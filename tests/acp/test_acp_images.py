"""Images in an ACP prompt (`promptCapabilities.image`): checked by their bytes, sent to the
model; a bad one is a JSON-RPC error and nothing of the prompt is kept or sent."""

from __future__ import annotations

import base64
import io

import pytest
from acp import RequestError, helpers
from acp_support import acp_agent
from agent_e2e import api_env, blocks
from anthropic_server import reply


def png(color: str = "red", kind: str = "PNG") -> str:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (40, 30), color).save(out, kind)
    return base64.b64encode(out.getvalue()).decode()


async def test_an_image_in_the_prompt_reaches_the_model_and_a_bad_one_is_refused_losing_nothing(ws, fake):
    fake.push(reply("A red rectangle."))
    async with acp_agent(ws, api_env(fake)) as a:
        assert a.init.agent_capabilities.prompt_capabilities.image
        sid = (await a.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        for data, mime in (("bm90IGFuIGltYWdl", "image/png"), ("%%%", "image/png"), (png(kind="BMP"), "image/png")):
            # not base64, not an image, an image the API does not take (the bytes decide)
            with pytest.raises(RequestError) as err:
                await a.conn.prompt(
                    session_id=sid, prompt=[helpers.text_block("what is this?"), helpers.image_block(data, mime)]
                )
            assert err.value.code == -32602 and "image" in str(err.value), err.value
        assert fake.message_requests == []
        with pytest.raises(RequestError) as err:  # a shell command takes no image
            await a.conn.prompt(
                session_id=sid, prompt=[helpers.text_block("!ls"), helpers.image_block(png(), "image/png")]
            )
        assert err.value.code == -32602
        answer = await a.conn.prompt(
            session_id=sid, prompt=[helpers.text_block("what is this?"), helpers.image_block(png(), "image/png")]
        )
        assert answer.stop_reason == "end_turn" and "A red rectangle." in a.client.text(sid)
        (request,) = fake.message_requests
        sent = blocks(request)
        (image,) = [b for b in sent if b["type"] == "image"]
        assert (
            image["source"]["media_type"] == "image/png" and base64.b64decode(image["source"]["data"])[:4] == b"\x89PNG"
        )
        texts = [b.get("text", "") for b in sent if b["type"] == "text"]
        assert sum("what is this?" in t for t in texts) == 1  # the refused prompts were not kept
