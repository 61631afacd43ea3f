"""The first turn over LSP: the provider is warmed while the server idles, and model
requests match the model (max_tokens, thinking, effort) as configured.

Whether the SDK is loaded is read from the server's memory map (`/proc/<pid>/maps`):
`import anthropic` loads the compiled pydantic-core and jiter extensions, which nothing
on the server's own start-up path loads. Timings are in benchmarks/bench_first_turn.py.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agent_e2e import api_env
from anthropic_server import FakeAnthropicServer, reply
from harness import Session, lsp_session, server_process

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]

SDK_MARKERS = ("_pydantic_core", "jiter.")


def sdk_loaded(s: Session) -> bool:
    pid = server_process(s).pid
    maps = Path(f"/proc/{pid}/maps").read_text()
    return all(marker in maps for marker in SDK_MARKERS)


async def eventually_loaded(s: Session, timeout: float = 60.0) -> bool:
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        if sdk_loaded(s):
            return True
        await asyncio.sleep(0.05)
    return False


async def settle(s: Session, seconds: float = 2.0) -> None:
    """A round trip (the engine is built), then time for a warm-up to start (0.5 s)."""
    assert (await s.execute("coder.listCommands", {}))["status"] == "completed"
    await asyncio.sleep(seconds)


async def test_idle_server_imports_the_sdk_before_the_first_turn(fake: FakeAnthropicServer, ws: Path) -> None:
    async with lsp_session(ws, env=api_env(fake)) as s:
        assert await eventually_loaded(s), "the SDK was not imported while the server was idle"
        # warming sends no message: it lists the account's models, once
        assert fake.message_requests == []
        await s.wait_for(lambda: fake.requests, timeout=30)
        assert [r.path.split("?")[0] for r in fake.requests] == ["/v1/models"]
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


async def test_warm_up_off_leaves_the_sdk_to_the_first_turn(fake: FakeAnthropicServer, ws: Path) -> None:
    async with lsp_session(ws, env={**api_env(fake), "CODER_WARMUP": "0"}) as s:
        await settle(s)
        assert not sdk_loaded(s)
        fake.push(reply("Hi."))
        result = await s.execute("coder.input", {"text": "say hi"})
        assert result["status"] == "completed", result
        assert sdk_loaded(s)


async def test_the_warmup_setting_turns_it_off_and_the_environment_wins(fake: FakeAnthropicServer, ws: Path) -> None:
    """`"warmup": false` in the editor's settings keeps the idle server small; the
    variable `CODER_WARMUP`, set, decides over the setting."""
    async with lsp_session(ws, env=api_env(fake), init_options={"warmup": False}) as s:
        await settle(s)
        assert not sdk_loaded(s)
        fake.push(reply("Hi."))
        result = await s.execute("coder.input", {"text": "say hi"})
        assert result["status"] == "completed" and sdk_loaded(s), result
    async with lsp_session(ws, env={**api_env(fake), "CODER_WARMUP": "1"}, init_options={"warmup": False}) as s:
        assert await eventually_loaded(s), "CODER_WARMUP=1 did not win over the setting"


async def test_scripted_provider_warms_nothing_heavy(tmp_path: Path, ws: Path) -> None:
    script = tmp_path / "turns.json"
    script.write_text('{"turns": [{"text": "scripted hello"}]}')
    async with lsp_session(ws, init_options={"provider": "scripted", "scriptedFile": str(script)}) as s:
        await settle(s)
        assert not sdk_loaded(s)
        result = await s.execute("coder.input", {"text": "say hi"})
        assert result["status"] == "completed" and result["reply"] == "scripted hello", result


async def test_no_api_key_warms_nothing(ws: Path) -> None:
    async with lsp_session(ws, env={}) as s:
        await settle(s)
        assert not sdk_loaded(s)


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
