"""Credentials never leave their origin (contract section 21), end to end: a real
`coder-ls` over LSP against loopback endpoints that answer exact bytes (raw_endpoint.py).

- A redirect to another origin (here: another port) is not followed: the second server
  receives nothing, no `x-api-key` in particular, and the turn's error says where the
  endpoint pointed. A redirect within the origin is followed.
- A base URL in plain `http://` to a host that is not this machine gets no key: the
  turn fails with a message saying why and how to allow it; `allowInsecureBaseUrl`
  allows it. (The "remote" host is reached through a proxy on 127.0.0.1, the endpoint
  itself, so that the test sees what would have crossed the network.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness import lsp_session
from raw_endpoint import RawEndpoint, json_answer, redirect, sse_answer

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]

KEY = "sk-ant-secret-key"


def env_for(url: str, **extra: str) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": url, "CODER_WARMUP": "0", **extra}


def user_config(ws: Path, settings: dict[str, object]) -> None:
    folder = ws.parent / f".xdg-{ws.name}" / "coder"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(settings))


async def test_a_redirect_to_another_origin_gets_no_key(ws: Path) -> None:
    with RawEndpoint() as first, RawEndpoint() as second:
        second.route("POST", "/v1/messages", sse_answer({"text": "stolen"}))
        second.route("GET", "/v1/models", json_answer(200, {"data": [], "has_more": False}))
        first.route("POST", "/v1/messages", redirect(307, f"{second.url}/v1/messages"))
        first.route("GET", "/v1/models", redirect(302, f"{second.url}/v1/models"))
        async with lsp_session(ws, env=env_for(first.url)) as s:
            result = await s.execute("coder.input", {"text": "say hi"})
            assert result["status"] == "failed", result
            message = result["error"]["message"]
            assert "redirect" in message and second.url in message, message
            models = await s.execute("coder.input", {"text": "/model"})
            assert models["status"] == "completed", models
        assert first.requests_to("/v1/messages"), "the first endpoint was asked"
        assert first.requests_to("/v1/messages")[0].headers["x-api-key"] == KEY
        assert second.requests == [], [(r.target, r.headers) for r in second.requests]


async def test_a_redirect_within_the_origin_is_followed(ws: Path) -> None:
    with RawEndpoint() as endpoint:
        endpoint.route("POST", "/v1/messages", redirect(307, "/v2/messages"))
        endpoint.route("POST", "/v2/messages", sse_answer({"text": "Moved, still here."}))
        async with lsp_session(ws, env=env_for(endpoint.url)) as s:
            result = await s.execute("coder.input", {"text": "say hi"})
            assert result["status"] == "completed", result
            assert "Moved, still here." in result["reply"]
        (moved,) = endpoint.requests_to("/v2/messages")
        assert moved.headers["x-api-key"] == KEY and moved.json()["messages"]


async def test_plain_http_to_another_host_gets_no_key(ws: Path) -> None:
    remote = "http://models.example.invalid"
    with RawEndpoint() as proxy:
        proxy.route("POST", "/v1/messages", sse_answer({"text": "over the wire in clear"}))
        env = env_for(remote, HTTP_PROXY=proxy.url, NO_PROXY="")
        async with lsp_session(ws, env=env) as s:
            result = await s.execute("coder.input", {"text": "say hi"})
            assert result["status"] == "failed", result
            message = result["error"]["message"]
            assert "http://models.example.invalid" in message and "allowInsecureBaseUrl" in message, message
        assert proxy.requests == [], [(r.target, r.headers) for r in proxy.requests]


async def test_allow_insecure_base_url_lets_it_through(ws: Path) -> None:
    remote = "http://models.example.invalid"
    user_config(ws, {"allowInsecureBaseUrl": True})
    with RawEndpoint() as proxy:
        proxy.route("POST", "/v1/messages", sse_answer({"text": "over the wire in clear"}))
        env = env_for(remote, HTTP_PROXY=proxy.url, NO_PROXY="")
        async with lsp_session(ws, env=env) as s:
            result = await s.execute("coder.input", {"text": "say hi"})
            assert result["status"] == "completed", result
        (sent,) = proxy.requests_to("/v1/messages")
        assert sent.target == f"{remote}/v1/messages" and sent.headers["x-api-key"] == KEY
