"""The fake Anthropic server itself: SSE shape, standalone process mode, control endpoints."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anthropic_rules import API_HEADERS
from anthropic_server import FAKES_DIR, FakeAnthropicServer, build_events, check_rejections, reply

from coder_ls.llm.anthropic_provider import AnthropicProvider
from coder_ls.llm.base import ProviderRequest, Stop, TextDelta
from coder_ls.protocol.messages import Message, TextBlock

pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

REQUEST = ProviderRequest(
    model="claude-haiku-4-5", system="", messages=[Message("user", [TextBlock("hi")])], max_tokens=100
)


def get_json(url: str, data: Any = None) -> Any:
    body = None if data is None else json.dumps(data).encode()
    req = urllib.request.Request(url, data=body, headers=API_HEADERS)
    with urllib.request.urlopen(req, timeout=5) as resp:
        return json.loads(resp.read())


def test_event_sequence_matches_the_api() -> None:
    events = build_events(reply("hi", thinking="t", toolCalls=[{"name": "read", "input": {}}]))
    names = [name for name, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    starts = [data["content_block"]["type"] for name, data in events if name == "content_block_start"]
    assert starts == ["thinking", "text", "tool_use"]
    deltas = {data["delta"]["type"] for name, data in events if name == "content_block_delta"}
    assert deltas == {"thinking_delta", "signature_delta", "text_delta", "input_json_delta"}
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


async def test_non_streaming_request_with_the_sdk(fake_anthropic: FakeAnthropicServer) -> None:
    import anthropic

    fake_anthropic.push(reply("plain answer", usage={"input_tokens": 3, "output_tokens": 2}))
    client = anthropic.AsyncAnthropic(api_key="k", base_url=fake_anthropic.url, max_retries=0)
    try:
        message = await client.messages.create(
            model="claude-haiku-4-5", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
    finally:
        await client.close()
    assert message.content[0].text == "plain answer"  # type: ignore[union-attr]
    assert message.usage.input_tokens == 3
    assert get_json(fake_anthropic.url + "/health")["ok"] is True


@pytest.fixture
def server_process(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [reply("from the script")], "default": reply("default")}))
    record = tmp_path / "requests.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            str(FAKES_DIR / "anthropic_server.py"),
            "--script",
            str(script),
            "--record",
            str(record),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        yield url, record
    finally:
        proc.terminate()
        assert proc.wait(10) == 0


async def test_standalone_process(server_process: tuple[str, Path]) -> None:
    url, record = server_process
    assert get_json(url + "/health") == {"ok": True, "pending": 1}
    provider = AnthropicProvider(api_key="k", base_url=url)
    try:
        items = [i async for i in provider.stream(REQUEST)]
        assert "".join(i.text for i in items if isinstance(i, TextDelta)) == "from the script"
        assert items[-1] == Stop(reason="end_turn")
        get_json(url + "/_script", {"responses": [reply("pushed")]})
        items = [i async for i in provider.stream(REQUEST)]
        assert "".join(i.text for i in items if isinstance(i, TextDelta)) == "pushed"
        items = [i async for i in provider.stream(REQUEST)]
        assert "".join(i.text for i in items if isinstance(i, TextDelta)) == "default"
    finally:
        await provider.aclose()
    recorded = get_json(url + "/_requests")
    assert len(recorded) == 3 and recorded[0]["body"]["model"] == "claude-haiku-4-5"
    lines = record.read_text().splitlines()
    assert len(lines) == 3 and json.loads(lines[0])["path"] == "/v1/messages"


# ------------------------------------------------------------------ strictness: what the real API refuses

USER = {"role": "user", "content": "hi"}
TOOL = {"name": "read", "description": "d", "input_schema": {"type": "object", "properties": {}}}
USE = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}}]}
RESULT = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]}
SIGNED = {"type": "thinking", "thinking": "hm", "signature": "sig"}


def base(**overrides: Any) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-5", "max_tokens": 2048, "messages": [USER], **overrides}


REFUSED = {
    "no model": ({k: v for k, v in base().items() if k != "model"}, "model: Field required"),
    "no max_tokens": ({k: v for k, v in base().items() if k != "max_tokens"}, "max_tokens: Field required"),
    "no messages": ({k: v for k, v in base().items() if k != "messages"}, "messages: Field required"),
    "assistant first": (base(messages=[{"role": "assistant", "content": "hi"}, USER]), "first message"),
    "tool_result without its tool_use": (
        base(messages=[USER, {"role": "assistant", "content": "ok"}, RESULT]),
        "unexpected `tool_use_id`",
    ),
    "tool_use without its tool_result": (base(messages=[USER, USE, USER]), "without `tool_result` blocks"),
    "tool_use answered two turns later": (
        base(messages=[USER, USE, USER, {"role": "assistant", "content": "a"}, RESULT]),
        "without `tool_result`",
    ),
    "empty text block": (
        base(messages=[{"role": "user", "content": [{"type": "text", "text": ""}]}]),
        "must be non-empty",
    ),
    "whitespace text block": (
        base(messages=[{"role": "user", "content": [{"type": "text", "text": " \n"}]}]),
        "non-whitespace",
    ),
    "empty string content": (base(messages=[{"role": "user", "content": ""}]), "non-empty content"),
    "empty content list": (base(messages=[{"role": "user", "content": []}]), "non-empty content"),
    "five cache breakpoints": (
        base(
            messages=[
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": f"t{i}", "cache_control": {"type": "ephemeral"}} for i in range(5)
                    ],
                }
            ]
        ),
        "A maximum of 4 blocks with cache_control",
    ),
    "thinking budget below 1024": (
        base(thinking={"type": "enabled", "budget_tokens": 1000}),
        "greater than or equal to 1024",
    ),
    "thinking budget not below max_tokens": (
        base(max_tokens=2048, thinking={"type": "enabled", "budget_tokens": 2048}),
        "`max_tokens` must be greater",
    ),
    "temperature with thinking": (
        base(temperature=0.5, thinking={"type": "enabled", "budget_tokens": 1024}),
        "temperature",
    ),
    "unsigned thinking replayed": (
        base(
            thinking={"type": "enabled", "budget_tokens": 1024},
            messages=[
                USER,
                {
                    "role": "assistant",
                    "content": [{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "a"}],
                },
                USER,
            ],
        ),
        "signature: Field required",
    ),
    "tool loop without its thinking block": (
        base(thinking={"type": "enabled", "budget_tokens": 1024}, tools=[TOOL], messages=[USER, USE, RESULT]),
        "must start with a thinking block",
    ),
    "bad tool name": (base(tools=[{**TOOL, "name": "read file"}]), "String should match pattern"),
    "tool name too long": (base(tools=[{**TOOL, "name": "x" * 65}]), "String should match pattern"),
    "tool schema not an object": (
        base(tools=[{**TOOL, "input_schema": {"type": "string"}}]),
        "Input should be 'object'",
    ),
}

ACCEPTED = {
    "plain": base(),
    "consecutive user messages are combined": base(messages=[USER, USER]),
    "a tool loop": base(tools=[TOOL], messages=[USER, USE, RESULT]),
    "tool results then text in one combined turn": base(tools=[TOOL], messages=[USER, USE, RESULT, USER]),
    "four cache breakpoints": base(
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": f"t{i}", "cache_control": {"type": "ephemeral"}} for i in range(4)
                ],
            }
        ]
    ),
    "thinking tool loop with signed thinking": base(
        thinking={"type": "enabled", "budget_tokens": 1024},
        tools=[TOOL],
        messages=[USER, {"role": "assistant", "content": [SIGNED, *USE["content"]]}, RESULT],
    ),
}


def post(url: str, body: Any) -> tuple[int, Any]:
    req = urllib.request.Request(
        url + "/v1/messages", data=json.dumps(body).encode(), headers=API_HEADERS
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.mark.expect_rejection
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refuses_what_the_real_api_refuses(fake_anthropic: FakeAnthropicServer, case: str) -> None:
    body, words = REFUSED[case]
    fake_anthropic.push(reply("must not be consumed"))
    status, answer = post(fake_anthropic.url, body)
    assert status == 400
    assert answer["type"] == "error" and answer["error"]["type"] == "invalid_request_error"
    assert words in answer["error"]["message"]
    assert fake_anthropic.pending == 1  # the script is untouched
    assert [m for m, _ in fake_anthropic.rejections] == [answer["error"]["message"]]


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_accepts_what_the_real_api_accepts(fake_anthropic: FakeAnthropicServer, case: str) -> None:
    fake_anthropic.push(reply("fine"))
    status, answer = post(fake_anthropic.url, ACCEPTED[case])
    assert status == 200, answer
    assert answer["content"][0]["text"] == "fine"


@pytest.mark.expect_rejection
async def test_the_sdk_sees_the_real_error_shape(fake_anthropic: FakeAnthropicServer) -> None:
    import anthropic

    client = anthropic.AsyncAnthropic(api_key="k", base_url=fake_anthropic.url, max_retries=0)
    try:
        with pytest.raises(anthropic.BadRequestError) as caught:
            await client.messages.create(
                model="claude-haiku-4-5",
                max_tokens=10,
                messages=[{"role": "user", "content": [{"type": "text", "text": ""}]}],
            )
    finally:
        await client.close()
    assert caught.value.status_code == 400
    assert caught.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]


def test_a_refused_request_fails_the_test_that_sent_it() -> None:
    with FakeAnthropicServer() as server:
        status, _ = post(server.url, base(messages=[USE]))
        assert status == 400
        with pytest.raises(AssertionError, match="refused 1 request"):
            check_rejections(server, expected=False)
        post(server.url, base(messages=[USE]))
        check_rejections(server, expected=True)  # a test that means it
        assert server.rejections == []


@pytest.mark.expect_rejection
@pytest.mark.parametrize(
    ("drop", "status", "words"),
    [("anthropic-version", 400, "anthropic-version"), ("x-api-key", 401, "x-api-key")],
)
def test_refuses_a_request_without_version_or_key(
    fake_anthropic: FakeAnthropicServer, drop: str, status: int, words: str
) -> None:
    """Our own HTTP client sets these headers (no SDK does it for us): the fake checks them."""
    fake_anthropic.push(reply("must not be consumed"))
    headers = {k: v for k, v in API_HEADERS.items() if k != drop}
    body = {"model": "claude-haiku-4-5", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    req = urllib.request.Request(fake_anthropic.url + "/v1/messages", data=json.dumps(body).encode(), headers=headers)
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(req, timeout=5)
    assert info.value.code == status and words in json.loads(info.value.read())["error"]["message"]
    assert fake_anthropic.pending == 1


def test_models_listing_pages_as_the_api_does(fake_anthropic: FakeAnthropicServer) -> None:
    def page(query: str) -> Any:
        req = urllib.request.Request(f"{fake_anthropic.url}/v1/models?{query}", headers=API_HEADERS)
        with urllib.request.urlopen(req, timeout=5) as resp:
            return json.loads(resp.read())

    first = page("limit=1")
    assert len(first["data"]) == 1 and first["has_more"] is True
    rest = page(f"limit=1000&after_id={first['last_id']}")
    assert rest["has_more"] is False
    assert [m["id"] for m in first["data"] + rest["data"]] == [m["id"] for m in page("limit=1000")["data"]]


async def test_provider_reads_every_page_of_the_models_listing(fake_anthropic: FakeAnthropicServer) -> None:
    """150 retired models first, then the current ones and a newer Sonnet on the last page:
    the alias `sonnet` resolves to the model only the second page names."""
    from coder_ls.llm.catalog import ModelCatalog

    current = fake_anthropic.models
    sonnet = next(m for m in current if m["id"].startswith("claude-sonnet"))
    filler = [{**sonnet, "id": f"claude-old-{i}", "lifecycle": "retired"} for i in range(150)]
    newest = {**sonnet, "id": "claude-sonnet-9-0", "created_at": "2027-01-01T00:00:00Z"}
    fake_anthropic.models = [*filler, *current, newest]
    provider = AnthropicProvider(api_key="k", base_url=fake_anthropic.url, catalog=ModelCatalog())
    try:
        await provider.refresh_models()
    finally:
        await provider.aclose()
    assert provider.catalog.last_error == ""
    listed = [r.path for r in fake_anthropic.requests if r.path.startswith("/v1/models")]
    assert len(listed) == 2 and "after_id=claude-old-99" in listed[1]
    assert provider.catalog.resolve("sonnet") == "claude-sonnet-9-0"
