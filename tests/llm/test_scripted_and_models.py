"""ScriptedProvider replay, the model list, make_provider and the lazy SDK import."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from coder_ls.llm.base import (
    Provider,
    ProviderError,
    ProviderRequest,
    Stop,
    StreamItem,
    TextDelta,
    ThinkingDelta,
    ThinkingDone,
    ToolCallDone,
    Usage,
)
from coder_ls.llm.factory import make_provider
from coder_ls.llm.models import KNOWN_MODELS, find_model, model_supports_thinking
from coder_ls.llm.scripted import SCRIPT_FINISHED_TEXT, ScriptedProvider
from coder_ls.protocol.config import Config
from coder_ls.protocol.messages import Message, TextBlock

REQUEST = ProviderRequest(model="scripted", system="sys", messages=[Message("user", [TextBlock("hi")])])


async def collect(provider: Provider) -> list[StreamItem]:
    return [item async for item in provider.stream(REQUEST)]


def text_of(items: list[StreamItem]) -> str:
    return "".join(i.text for i in items if isinstance(i, TextDelta))


SCRIPT = {
    "turns": [
        {
            "thinking": "I need to read the file first.",
            "text": "Let me read the file.",
            "toolCalls": [{"name": "read", "input": {"path": "a.py"}}],
        },
        {"text": "The file prints one.", "usage": {"inputTokens": 100, "outputTokens": 7}},
    ]
}


async def test_scripted_replay_from_file(tmp_path: Path) -> None:
    (tmp_path / "script.json").write_text(json.dumps(SCRIPT))
    provider = make_provider(Config(provider="scripted", scripted_file="script.json"), {}, tmp_path)
    assert isinstance(provider, ScriptedProvider) and isinstance(provider, Provider)

    first = await collect(provider)
    thinking = "".join(i.text for i in first if isinstance(i, ThinkingDelta))
    assert thinking == "I need to read the file first."
    assert ThinkingDone("I need to read the file first.", "") in first
    assert len([i for i in first if isinstance(i, TextDelta)]) > 1  # a few deltas
    assert text_of(first) == "Let me read the file."
    (call,) = [i for i in first if isinstance(i, ToolCallDone)]
    assert call.name == "read" and call.input == {"path": "a.py"} and call.id
    assert isinstance(first[-2], Usage) and first[-1] == Stop(reason="tool_use")

    second = await collect(provider)
    assert text_of(second) == "The file prints one."
    assert second[-2] == Usage(input_tokens=100, output_tokens=7)
    assert second[-1] == Stop(reason="end_turn")

    third = await collect(provider)
    assert text_of(third) == SCRIPT_FINISHED_TEXT and third[-1] == Stop(reason="end_turn")
    assert len(provider.requests) == 3


async def test_scripted_model_name_selects_provider(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text('{"turns": [{"text": "hello"}]}')
    provider = make_provider(Config(model="scripted", scripted_file=str(tmp_path / "s.json")), {}, tmp_path)
    assert text_of(await collect(provider)) == "hello"


async def test_scripted_error_turn() -> None:
    provider = ScriptedProvider([{"text": "partial", "error": {"kind": "overloaded", "message": "busy"}}])
    with pytest.raises(ProviderError) as info:
        await collect(provider)
    assert info.value.kind == "overloaded" and info.value.message == "busy"


async def test_scripted_turn_expecting_the_users_text() -> None:
    """`expectUserText`: the turn is given only to a request whose last user message holds
    that text (an editor test then proves what the model was sent); otherwise a clear error."""
    from coder_ls.protocol.messages import ToolResultBlock

    provider = ScriptedProvider([{"text": "Goodbye.", "expectUserText": "say goodbye"}, {"text": "next"}])
    wrong = ProviderRequest(model="scripted", system="s", messages=[Message("user", [TextBlock("say hello")])])
    with pytest.raises(ProviderError) as caught:
        [item async for item in provider.stream(wrong)]
    assert caught.value.kind == "bad_request"
    assert "'say goodbye'" in str(caught.value) and "'say hello'" in str(caught.value)
    # the last user message is the one the user wrote, not a tool result that followed it
    right = ProviderRequest(
        model="scripted",
        system="s",
        messages=[
            Message("user", [TextBlock("say hello")]),
            Message("user", [TextBlock("please "), TextBlock("say goodbye")]),
            Message("user", [ToolResultBlock("t1", "say hello")]),
        ],
    )
    provider = ScriptedProvider([{"text": "Goodbye.", "expectUserText": "say goodbye"}])
    assert text_of([item async for item in provider.stream(right)]) == "Goodbye."
    stale = ProviderRequest(
        model="scripted",
        system="s",
        messages=[Message("user", [TextBlock("say goodbye")]), Message("user", [TextBlock("say hello")])],
    )
    provider = ScriptedProvider([{"text": "Goodbye.", "expectUserText": "say goodbye"}])
    with pytest.raises(ProviderError):
        [item async for item in provider.stream(stale)]


async def test_scripted_delay_can_be_cancelled() -> None:
    provider = ScriptedProvider([{"text": "one two three four five six", "delayMs": 200}])
    seen: list[StreamItem] = []

    async def consume() -> None:
        async for item in provider.stream(REQUEST):
            seen.append(item)

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert 1 <= len(seen) < 3 and not any(isinstance(i, Stop) for i in seen)


def test_scripted_bad_files(tmp_path: Path) -> None:
    with pytest.raises(ProviderError) as info:
        make_provider(Config(provider="scripted", scripted_file="missing.json"), {}, tmp_path)
    assert info.value.kind == "config" and "missing.json" in info.value.message
    (tmp_path / "bad.json").write_text('{"turns": [{"txet": "typo"}]}')
    with pytest.raises(ProviderError) as info:
        make_provider(Config(provider="scripted", scripted_file="bad.json"), {}, tmp_path)
    assert info.value.kind == "config" and "txet" in info.value.message
    with pytest.raises(ProviderError) as info:
        make_provider(Config(provider="scripted"), {}, tmp_path)
    assert info.value.kind == "config" and "scriptedFile" in info.value.message


def test_scripted_file_from_environment(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text('{"turns": []}')
    provider = make_provider(Config(provider="scripted"), {"CODER_SCRIPTED_FILE": "s.json"}, tmp_path)
    assert isinstance(provider, ScriptedProvider)


def test_make_provider_without_key_is_config_error(tmp_path: Path) -> None:
    with pytest.raises(ProviderError) as info:
        make_provider(Config(), {"HOME": "/tmp"}, tmp_path)
    assert info.value.kind == "config" and not info.value.retryable
    assert "ANTHROPIC_API_KEY" in info.value.message and "scripted" in info.value.message
    with pytest.raises(ProviderError):
        make_provider(Config(), {"ANTHROPIC_API_KEY": "  "}, tmp_path)


def test_make_provider_anthropic(tmp_path: Path) -> None:
    from coder_ls.llm.anthropic_provider import AnthropicProvider

    env = {"ANTHROPIC_API_KEY": "sk-x", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    provider = make_provider(Config(), env, tmp_path)
    assert isinstance(provider, AnthropicProvider) and isinstance(provider, Provider)
    assert provider.api_key == "sk-x" and provider.base_url == "http://127.0.0.1:9"
    token = make_provider(Config(), {"ANTHROPIC_AUTH_TOKEN": "tok"}, tmp_path)
    assert isinstance(token, AnthropicProvider) and token.auth_token == "tok" and token.api_key is None


def test_unknown_provider(tmp_path: Path) -> None:
    with pytest.raises(ProviderError) as info:
        make_provider(Config(provider="openai"), {}, tmp_path)
    assert info.value.kind == "config" and "openai" in info.value.message


def test_known_models() -> None:
    names = [m.name for m in KNOWN_MODELS]
    for name in ("claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-4-5", "claude-sonnet-4-5", "scripted"):
        assert name in names
    assert find_model("claude-sonnet-4-5") is not None
    assert find_model("nope") is None
    assert model_supports_thinking("claude-opus-4-1")  # not in the table: its family thinks
    assert model_supports_thinking("claude-sonnet-4-5-20250929")
    assert not model_supports_thinking("scripted")
    assert not model_supports_thinking("claude-3-5-haiku-latest")


def test_sdk_not_imported_by_light_modules() -> None:
    code = (
        "import sys, pathlib\n"
        "import coder_ls.llm, coder_ls.llm.base, coder_ls.llm.models, coder_ls.llm.scripted, coder_ls.llm.catalog\n"
        "import coder_ls.llm.anthropic_provider, coder_ls.llm.anthropic_convert\n"
        "from coder_ls.llm.factory import make_provider\n"
        "from coder_ls.protocol.config import Config\n"
        "make_provider(Config(), {'ANTHROPIC_API_KEY': 'k'}, pathlib.Path('.'))\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('anthropic', 'httpx', 'httpx2'))\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
