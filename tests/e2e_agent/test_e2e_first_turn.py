"""The first turn over LSP: the provider is warmed while the server idles, and model
requests match the model (max_tokens, thinking, effort) as configured.

That the warm-up ran is read at the fake endpoint: once the provider's HTTP client is
built, the warm-up lists the account's models (`GET /v1/models`), before any turn.
Timings are in benchmarks/bench_first_turn.py.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agent_e2e import api_env
from anthropic_server import FakeAnthropicServer, reply
from harness import Session, lsp_session

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


def paths(fake: FakeAnthropicServer) -> list[str]:
    return [r.path.split("?")[0] for r in fake.requests]


async def settle(s: Session, seconds: float = 2.0) -> None:
    """A round trip (the engine is built), then time for a warm-up to run (it starts at once)."""
    assert (await s.execute("coder.listCommands", {}))["status"] == "completed"
    await asyncio.sleep(seconds)


async def test_idle_server_builds_the_client_before_the_first_turn(fake: FakeAnthropicServer, ws: Path) -> None:
    async with lsp_session(ws, env=api_env(fake)) as s:
        # warming sends no message: it builds the client and lists the account's models, once
        await s.wait_for(lambda: fake.requests, timeout=30)
        assert paths(fake) == ["/v1/models"]
        listing = fake.requests[0]
        assert listing.headers.get("x-api-key") == "test-key" and listing.headers.get("anthropic-version")
        fake.push(reply("Hello."))
        result = await s.execute("coder.input", {"text": "say hi"})
        assert result["status"] == "completed" and result["reply"] == "Hello.", result
        (request,) = fake.message_requests
        body = request.body
        # the default model (the newest Sonnet listed) thinks adaptively; max_tokens is its
        # limit, capped at 32,000
        assert body["model"] == "claude-sonnet-5-5"
        assert body["max_tokens"] == 32_000
        assert body["thinking"] == {"type": "adaptive"}
        assert "output_config" not in body and "temperature" not in body


async def test_warm_up_off_leaves_the_client_to_the_first_turn(fake: FakeAnthropicServer, ws: Path) -> None:
    async with lsp_session(ws, env={**api_env(fake), "CODER_WARMUP": "0"}) as s:
        await settle(s)
        assert paths(fake) == []
        fake.push(reply("Hi."))
        result = await s.execute("coder.input", {"text": "say hi"})
        assert result["status"] == "completed", result
        assert "/v1/messages" in paths(fake)


async def test_the_warmup_setting_turns_it_off_and_the_environment_wins(fake: FakeAnthropicServer, ws: Path) -> None:
    """`"warmup": false` in the editor's settings leaves the client to the first turn; the
    variable `CODER_WARMUP`, set, decides over the setting."""
    async with lsp_session(ws, env=api_env(fake), init_options={"warmup": False}) as s:
        await settle(s)
        assert paths(fake) == []
        fake.push(reply("Hi."))
        result = await s.execute("coder.input", {"text": "say hi"})
        assert result["status"] == "completed", result
    fake.requests.clear()
    # another key: the first session's turn cached its listing, this one has none to reuse
    env = {**api_env(fake), "ANTHROPIC_API_KEY": "second-key", "CODER_WARMUP": "1"}
    async with lsp_session(ws, env=env, init_options={"warmup": False}) as s:
        await s.wait_for(lambda: fake.requests, timeout=30)
        assert paths(fake) == ["/v1/models"], "CODER_WARMUP=1 did not win over the setting"


async def test_scripted_provider_talks_to_no_endpoint(fake: FakeAnthropicServer, tmp_path: Path, ws: Path) -> None:
    """With the scripted provider chosen, a key and an endpoint in the environment are not
    used: no listing while idle, no request for the turn."""
    script = tmp_path / "turns.json"
    script.write_text('{"turns": [{"text": "scripted hello"}]}')
    init = {"provider": "scripted", "scriptedFile": str(script)}
    async with lsp_session(ws, env=api_env(fake), init_options=init) as s:
        await settle(s)
        result = await s.execute("coder.input", {"text": "say hi"})
        assert result["status"] == "completed" and result["reply"] == "scripted hello", result
    assert paths(fake) == []


async def test_no_api_key_sends_nothing(fake: FakeAnthropicServer, ws: Path) -> None:
    """No credential: the warm-up does not try an unauthenticated listing."""
    env = {k: v for k, v in api_env(fake).items() if k != "ANTHROPIC_API_KEY"}
    async with lsp_session(ws, env=env) as s:
        await settle(s)
    assert paths(fake) == []


async def test_adaptive_model_gets_adaptive_thinking_and_effort(agent) -> None:
    a = await agent(model="claude-opus-4-6", effort="low")
    a.fake.push(reply("ok"))
    assert (await a.turn("hi"))["status"] == "completed"
    (request,) = a.fake.message_requests
    assert request.body["thinking"] == {"type": "adaptive"}
    assert request.body["output_config"] == {"effort": "low"}
    assert request.body["max_tokens"] == 32_000


async def test_thinking_off_and_max_output_tokens_configured(agent) -> None:
    a = await agent(model="claude-haiku-4-5", thinking="off", maxOutputTokens=4000, effort="max")
    a.fake.push(reply("ok"))
    assert (await a.turn("hi"))["status"] == "completed"
    (request,) = a.fake.message_requests
    assert "thinking" not in request.body
    assert request.body["max_tokens"] == 4000
    assert "output_config" not in request.body  # haiku 4.5 takes no effort


async def test_model_without_thinking_gets_none(agent) -> None:
    """A model of no known family (a gateway's id): no thinking, the smallest limit."""
    a = await agent(model="my-gateway-model")
    a.fake.push(reply("ok"))
    assert (await a.turn("hi"))["status"] == "completed"
    (request,) = a.fake.message_requests
    assert "thinking" not in request.body
    assert request.body["max_tokens"] == 8192
