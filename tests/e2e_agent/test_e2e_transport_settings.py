"""Users' settings for the model transport (contract section 21), end to end: a real
`coder-ls` against a loopback endpoint that records what it receives.

- `ANTHROPIC_CUSTOM_HEADERS` (`Name: value` lines) goes with every request: the
  messages, the token count and the models listing (a gateway routes by them); a line
  that would set the credential is left out.
- An authentication error names the variable the credential came from.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import lsp_session
from raw_endpoint import RawEndpoint, api_error, json_answer, sse_answer

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


async def test_custom_headers_go_with_every_request(ws: Path) -> None:
    headers = "X-Gateway-Route: team-a\nX-Budget:  42 \n\nnot a header\nx-api-key: stolen"
    env = {"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_CUSTOM_HEADERS": headers}
    with RawEndpoint() as endpoint:
        endpoint.route("POST", "/v1/messages", sse_answer({"text": "Routed."}))
        endpoint.route("POST", "/v1/messages/count_tokens", json_answer(200, {"input_tokens": 7}))
        endpoint.route("GET", "/v1/models", json_answer(200, {"data": [], "has_more": False}))
        async with lsp_session(ws, env={**env, "ANTHROPIC_BASE_URL": endpoint.url}) as s:
            result = await s.execute("coder.input", {"text": "say hi"})
            assert result["status"] == "completed", result
            await s.execute("coder.input", {"text": "/context"})
            await s.wait_for(lambda: endpoint.requests_to("/v1/models"), 30)
        for path in ("/v1/messages", "/v1/messages/count_tokens", "/v1/models"):
            (request, *_) = endpoint.requests_to(path)
            assert request.headers.get("x-gateway-route") == "team-a", (path, request.headers)
            assert request.headers.get("x-budget") == "42", (path, request.headers)
            assert request.headers["x-api-key"] == "sk-test"  # a custom header cannot replace the key


async def test_a_rejected_bearer_token_is_named_as_such(ws: Path) -> None:
    with RawEndpoint() as endpoint:
        endpoint.route("POST", "/v1/messages", api_error(401, "authentication_error", "invalid bearer token"))
        env = {"ANTHROPIC_AUTH_TOKEN": "tok-test", "ANTHROPIC_BASE_URL": endpoint.url, "CODER_WARMUP": "0"}
        async with lsp_session(ws, env=env) as s:
            result = await s.execute("coder.input", {"text": "say hi"})
            assert result["status"] == "failed", result
            message = result["error"]["message"]
            assert "ANTHROPIC_AUTH_TOKEN" in message and "ANTHROPIC_API_KEY" not in message, message
        assert endpoint.requests_to("/v1/messages")[0].headers["authorization"] == "Bearer tok-test"
