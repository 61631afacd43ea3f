"""Models as the API knows them, over LSP against the strict fake (issue: the default
model's end of life).

- The default model is the alias `sonnet`: the newest active Sonnet the Models API lists
  (`GET /v1/models`, fetched in the background after `initialized`), else the built-in
  table's newest Sonnet when the listing fails.
- A configured model that is deprecated gets exactly one `window/showMessage` warning
  with its end-of-life date and the model to switch to; after its end of life (the API
  answers 404) the turn's error says so in plain words.
- `/model` lists what the account can use, from the API, with limits and deprecations.
- The fake refuses a thinking type a model does not accept, as the real API does.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from agent_e2e import api_env
from anthropic_models import MODELS, FakeModel, listing
from anthropic_rules import API_HEADERS
from anthropic_server import FakeAnthropicServer, reply
from harness import Session, lsp_session

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


def models_requests(fake: FakeAnthropicServer) -> list[Any]:
    return [r for r in fake.requests if r.path.split("?")[0] == "/v1/models"]


async def listed(s: Session, fake: FakeAnthropicServer, timeout: float = 60.0) -> None:
    """The server asked for the listing once it was initialized (the warm-up)."""
    await s.wait_for(lambda: models_requests(fake), timeout)
    await asyncio.sleep(0.3)  # the answer is merged into the catalog


def warnings_about(s: Session, model: str) -> list[str]:
    return [m.message for m in s.client.messages if model in m.message and "end of life" in m.message]


async def test_default_is_the_newest_sonnet_the_api_lists(ws: Path) -> None:
    newer = FakeModel("claude-sonnet-6", "Claude Sonnet 6", "2026-11-20T00:00:00Z", "sonnet")
    preview = FakeModel("claude-sonnet-7", "Claude Sonnet 7", "2026-11-24T00:00:00Z", "sonnet", lifecycle="deprecated")
    with FakeAnthropicServer(models=listing((preview, newer, *MODELS))) as fake:
        async with lsp_session(ws, env=api_env(fake)) as s:
            await listed(s, fake)
            assert not [r for r in fake.message_requests]  # the listing sends no message
            fake.push(reply("Hello."))
            result = await s.execute("coder.input", {"text": "say hi"})
            assert result["status"] == "completed", result
            (request,) = fake.message_requests
            # the newest *active* Sonnet: not the table's, not a deprecated newer one
            assert request.body["model"] == "claude-sonnet-6"
            assert request.body["thinking"] == {"type": "adaptive"}
            # nothing warned: the default is current
            assert not [m for m in s.client.messages if "deprecated" in m.message or "end of life" in m.message]


async def test_listing_fails_the_built_in_sonnet_is_used(ws: Path) -> None:
    with FakeAnthropicServer(models_status=500) as fake:
        async with lsp_session(ws, env=api_env(fake)) as s:
            await listed(s, fake)
            fake.push(reply("Hello."))
            result = await s.execute("coder.input", {"text": "say hi"})
            assert result["status"] == "completed", result
            (request,) = fake.message_requests
            assert request.body["model"] == "claude-sonnet-5-5"
            assert request.body["max_tokens"] == 32_000 and request.body["thinking"] == {"type": "adaptive"}
            models = await s.execute("coder.input", {"text": "/model"})
            assert models["data"]["source"] == "builtin"
            assert models["data"]["resolved"] == "claude-sonnet-5-5"


async def test_deprecated_model_warns_once_with_its_date_and_replacement(ws: Path) -> None:
    (ws / ".coder").mkdir()
    (ws / ".coder" / "config.json").write_text(json.dumps({"model": "claude-sonnet-4-5"}))
    with FakeAnthropicServer() as fake:
        async with lsp_session(ws, env=api_env(fake)) as s:
            await s.wait_for(lambda: warnings_about(s, "claude-sonnet-4-5"), 60)
            for text in ("one", "two"):
                fake.push(reply(f"Answer {text}."))
                result = await s.execute("coder.input", {"text": text})
                assert result["status"] == "completed", result
            (warning,) = warnings_about(s, "claude-sonnet-4-5")
            assert "November 30, 2026" in warning and "claude-sonnet-5-5" in warning, warning
            # the model the user set is used as set, never replaced
            assert {r.body["model"] for r in fake.message_requests} == {"claude-sonnet-4-5"}
            shown = await s.execute("coder.input", {"text": "/model"})
            entry = next(m for m in shown["data"]["models"] if m["name"] == "claude-sonnet-4-5")
            assert entry["deprecated"] and entry["endOfLife"] == "2026-11-30"
            assert entry["replacement"] == "claude-sonnet-5-5"
            assert "DEPRECATED" in shown["reply"]


async def test_deprecation_known_from_the_sdk_even_without_the_listing(ws: Path) -> None:
    """The SDK ships end-of-life dates: with the Models API down, the warning still comes."""
    (ws / ".coder").mkdir()
    (ws / ".coder" / "config.json").write_text(json.dumps({"model": "claude-opus-4-5"}))
    with FakeAnthropicServer(models_status=503) as fake:
        async with lsp_session(ws, env=api_env(fake)) as s:
            await s.wait_for(lambda: warnings_about(s, "claude-opus-4-5"), 60)
            (warning,) = warnings_about(s, "claude-opus-4-5")
            assert "January 22, 2027" in warning and "claude-opus-5-5" in warning, warning


async def test_after_end_of_life_the_error_says_so(ws: Path) -> None:
    retired = [
        {**m, "lifecycle": "retired"} if m["id"] == "claude-sonnet-4-5" else m for m in listing()
    ]
    with FakeAnthropicServer(models=retired) as fake:
        async with lsp_session(ws, env=api_env(fake)) as s:
            await listed(s, fake)
            result = await s.execute("coder.input", {"text": "/model claude-sonnet-4-5"})
            assert result["status"] == "completed", result
            result = await s.execute("coder.input", {"text": "say hi"})
            assert result["status"] == "failed", result
            message = result["error"]["message"]
            assert "end of life" in message and "no longer served" in message, message
            assert "claude-sonnet-5-5" in message, message
            # a retired model is not offered
            shown = await s.execute("coder.input", {"text": "/model"})
            assert "claude-sonnet-4-5" not in {m["name"] for m in shown["data"]["models"]}


async def test_model_lists_the_accounts_models_with_limits(ws: Path) -> None:
    with FakeAnthropicServer() as fake:
        async with lsp_session(ws, env=api_env(fake)) as s:
            await listed(s, fake)
            shown = await s.execute("coder.input", {"text": "/model"})
            data = shown["data"]
            assert data["source"] == "api" and data["current"] == "sonnet"
            assert data["resolved"] == "claude-sonnet-5-5"
            by_name = {m["name"]: m for m in data["models"]}
            assert by_name["claude-fable-5-2"]["displayName"] == "Claude Fable 5.2"
            assert by_name["claude-haiku-4-5"]["contextWindow"] == 200_000
            assert by_name["claude-opus-5-5"]["maxOutputTokens"] == 128_000
            assert "scripted" in by_name
            assert "Current model: sonnet = claude-sonnet-5-5" in shown["reply"]
            # an alias picks the newest of its line; a typo is an error that names the aliases
            chose = await s.execute("coder.input", {"text": "/model opus"})
            assert "claude-opus-5-5" in chose["reply"], chose
            fake.push(reply("Hi."))
            result = await s.execute("coder.input", {"text": "hi"})
            assert result["status"] == "completed", result
            assert fake.message_requests[-1].body["model"] == "claude-opus-5-5"
            bad = await s.execute("coder.input", {"text": "/model sonet"})
            assert bad["status"] == "failed" and "sonnet" in bad["error"]["message"], bad


async def test_nothing_waits_for_a_slow_models_api(ws: Path) -> None:
    """A Models API that takes 60 s: the server answers at once, and a turn runs on the
    built-in table meanwhile."""
    with FakeAnthropicServer(models_delay=60) as fake:
        async with lsp_session(ws, env=api_env(fake)) as s:
            loop = asyncio.get_running_loop()
            started = loop.time()
            assert (await s.execute("coder.listCommands", {}))["status"] == "completed"
            assert loop.time() - started < 5
            fake.push(reply("Hi."))
            result = await s.execute("coder.input", {"text": "hi"})
            assert result["status"] == "completed", result
            assert fake.message_requests[-1].body["model"] == "claude-sonnet-5-5"
            assert loop.time() - started < 30


async def test_the_fake_refuses_what_each_model_refuses() -> None:
    """The strict fake answers as the API does: a budget to an adaptive-only model, adaptive
    to a budget-only one, an unknown effort level, a retired model."""
    import urllib.error
    import urllib.request

    base = {"max_tokens": 2000, "messages": [{"role": "user", "content": "hi"}]}
    with FakeAnthropicServer([reply("ok")] * 2) as fake:

        def post(**body: Any) -> int:
            data = json.dumps({**base, **body}).encode()
            req = urllib.request.Request(f"{fake.url}/v1/messages", data=data, headers=API_HEADERS, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=10) as response:
                    response.read()
                    return int(response.status)
            except urllib.error.HTTPError as exc:
                return exc.code

        budget = {"type": "enabled", "budget_tokens": 1024}
        assert post(model="claude-sonnet-5-5", thinking=budget) == 400
        assert post(model="claude-haiku-4-5", thinking={"type": "adaptive"}) == 400
        assert post(model="claude-sonnet-4-6", output_config={"effort": "max"}) == 400
        assert post(model="claude-3-5-haiku-latest") == 404
        assert post(model="claude-sonnet-4-6", thinking=budget) == 200
        assert post(model="claude-sonnet-5-5", thinking={"type": "adaptive"}) == 200
        assert len(fake.take_rejections()) == 3
