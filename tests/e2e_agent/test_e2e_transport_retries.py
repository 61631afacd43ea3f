"""Retries as the server asks (contract section 21), end to end: a real `coder-ls`
against a loopback endpoint that sends exact bytes (raw_endpoint.py).

- `x-should-retry: false` stops even a 500; `x-should-retry: true` retries even a 400.
- `retry-after: 0` says nothing: the backoff applies (not five attempts in 3 ms);
  `retry-after-ms` is honoured; a `retry-after` longer than the provider waits (5 min)
  fails at once with the delay in the message, instead of a retry cut short.
- `count_tokens` (`/context`) and the models listing are retried like messages.
"""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import pytest
from harness import lsp_session
from raw_endpoint import RawEndpoint, api_error, json_answer, sse_answer

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


def env_for(url: str, warmup: bool = False) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": url, "CODER_WARMUP": "1" if warmup else "0"}


def gaps(endpoint: RawEndpoint, path: str) -> list[float]:
    times = [r.time for r in endpoint.requests_to(path)]
    return [b - a for a, b in itertools.pairwise(times)]


async def test_x_should_retry_false_stops_a_500(ws: Path) -> None:
    with RawEndpoint() as endpoint:
        endpoint.route("POST", "/v1/messages", api_error(500, "api_error", "do not", {"x-should-retry": "false"}))
        async with lsp_session(ws, env=env_for(endpoint.url)) as s:
            result = await s.execute("coder.input", {"text": "say hi"})
            assert result["status"] == "failed", result
        assert len(endpoint.requests_to("/v1/messages")) == 1


async def test_x_should_retry_true_retries_a_400(ws: Path) -> None:
    with RawEndpoint() as endpoint:
        endpoint.route(
            "POST", "/v1/messages",
            api_error(400, "invalid_request_error", "try again", {"x-should-retry": "true"}),
            sse_answer({"text": "Second time lucky."}),
        )  # fmt: skip
        async with lsp_session(ws, env=env_for(endpoint.url)) as s:
            result = await s.execute("coder.input", {"text": "say hi"})
            assert result["status"] == "completed", result
            assert "Second time lucky." in result["reply"]
        assert len(endpoint.requests_to("/v1/messages")) == 2


async def test_retry_after_zero_backs_off_and_retry_after_ms_is_honoured(ws: Path) -> None:
    with RawEndpoint() as endpoint:
        endpoint.route(
            "POST", "/v1/messages",
            api_error(429, "rate_limit_error", "slow", {"retry-after": "0"}),
            api_error(529, "overloaded_error", "busy", {"retry-after-ms": "1500"}),
            sse_answer({"text": "Done."}),
        )  # fmt: skip
        async with lsp_session(ws, env=env_for(endpoint.url)) as s:
            result = await s.execute("coder.input", {"text": "say hi"})
            assert result["status"] == "completed", result
        first, second = gaps(endpoint, "/v1/messages")
        assert first >= 0.7, first  # the backoff (1 s, less 25 % jitter at most), not at once
        assert second >= 1.45, second  # 1,500 ms as asked


async def test_a_retry_after_beyond_five_minutes_fails_at_once_and_says_when(ws: Path) -> None:
    with RawEndpoint() as endpoint:
        endpoint.route("POST", "/v1/messages", api_error(429, "rate_limit_error", "slow", {"retry-after": "900"}))
        async with lsp_session(ws, env=env_for(endpoint.url)) as s:
            started = time.monotonic()
            result = await s.execute("coder.input", {"text": "say hi"})
            assert result["status"] == "failed", result
            assert "retry in 900 s" in result["error"]["message"], result
            assert time.monotonic() - started < 20
        assert len(endpoint.requests_to("/v1/messages")) == 1


async def test_count_tokens_and_the_models_listing_are_retried(ws: Path) -> None:
    newest = {"id": "claude-sonnet-9-9", "display_name": "Claude Sonnet 9.9", "created_at": "2027-01-01T00:00:00Z",
              "type": "model", "max_input_tokens": 1_000_000, "max_tokens": 128_000}  # fmt: skip
    with RawEndpoint() as endpoint:
        endpoint.route(
            "GET", "/v1/models",
            api_error(529, "overloaded_error", "busy"),
            json_answer(200, {"data": [newest], "has_more": False, "first_id": newest["id"], "last_id": newest["id"]}),
        )  # fmt: skip
        endpoint.route(
            "POST", "/v1/messages/count_tokens",
            api_error(529, "overloaded_error", "busy"),
            json_answer(200, {"input_tokens": 4242}),
        )  # fmt: skip
        async with lsp_session(ws, env=env_for(endpoint.url, warmup=True)) as s:
            await s.wait_for(lambda: len(endpoint.requests_to("/v1/models")) >= 2, 30)
            shown = await s.execute("coder.input", {"text": "/model"})
            assert shown["data"]["source"] == "api", shown
            assert "claude-sonnet-9-9" in json.dumps(shown["data"]["models"])
            context = await s.execute("coder.input", {"text": "/context"})
            assert context["status"] == "completed", context
            assert context["data"]["source"] == "api", context
        assert len(endpoint.requests_to("/v1/messages/count_tokens")) >= 2
