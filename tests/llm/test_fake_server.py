"""The fake Anthropic server itself: SSE shape, standalone process mode, control endpoints."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anthropic_server import FAKES_DIR, FakeAnthropicServer, build_events, reply

from coder_ls.llm.anthropic_provider import AnthropicProvider
from coder_ls.llm.base import ProviderRequest, Stop, TextDelta
from coder_ls.protocol.messages import Message, TextBlock

pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

REQUEST = ProviderRequest(
    model="claude-haiku-4-5", system="", messages=[Message("user", [TextBlock("hi")])], max_tokens=100
)


def get_json(url: str, data: Any = None) -> Any:
    body = None if data is None else json.dumps(data).encode()
    req = urllib.request.Request(url, data=body, headers={"content-type": "application/json"})
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
