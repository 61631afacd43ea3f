"""Claude through Amazon Bedrock, Google Vertex AI and a company gateway (contract section
21), end to end: a real `coder-ls` over LSP against fakes that check the signature (SigV4)
or the bearer token and speak each service's wire format (tests/fakes/cloud_fakes.py).

A tool-call turn runs through each (the tool result goes back in the second request, as
the strict Messages rules want it); the aliases resolve per provider (`haiku` becomes
Bedrock's id); a missing credential says which one and where it was looked for.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_e2e import calls, tool_call
from anthropic_server import FakeAnthropicServer, reply
from cloud_fakes import FakeBedrock, FakeVertex
from harness import lsp_session

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


def settings(ws: Path, values: dict[str, object]) -> Path:
    folder = ws.parent / f".xdg-{ws.name}" / "coder"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"permissions": "auto-edit", **values}))
    home = ws.parent / "home"  # no ~/.aws or gcloud of the machine's
    home.mkdir(exist_ok=True)
    return home


async def test_a_turn_through_bedrock_signed_with_sigv4(ws: Path) -> None:
    home = settings(ws, {"provider": "bedrock"})
    with FakeBedrock("AKIDTEST", "secret/key+TEST", "eu-west-3", token="session-token") as fake:
        fake.push(calls(tool_call("read", {"path": "app.py"}, "toolu_1")), reply("It subtracts."))
        env = {
            "HOME": str(home), "AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "secret/key+TEST",
            "AWS_SESSION_TOKEN": "session-token", "AWS_REGION": "eu-west-3", "ANTHROPIC_BEDROCK_BASE_URL": fake.url,
        }  # fmt: skip
        async with lsp_session(ws, env=env) as s:
            result = await s.execute("coder.input", {"text": "what does add do?"})
            assert result["status"] == "completed", (result["error"], result["reply"])
            assert "It subtracts." in result["reply"]
            chose = await s.execute("coder.input", {"text": "/model haiku"})
            assert chose["status"] == "completed", (chose["error"], chose["reply"])
            fake.push(reply("Short."))
            again = await s.execute("coder.input", {"text": "and briefly?"})
            assert again["status"] == "completed", (again["error"], again["reply"])
        assert fake.rejections == []
        assert fake.models == ["anthropic.claude-sonnet-5-5-v1:0"] * 2 + ["anthropic.claude-haiku-5-5-v1:0"]
        second = fake.bodies[1]["messages"]
        assert any(b.get("type") == "tool_result" for m in second for b in m["content"] if isinstance(b, dict))


async def test_bedrock_without_credentials_says_what_and_where(ws: Path) -> None:
    home = settings(ws, {"provider": "bedrock"})
    async with lsp_session(ws, env={"HOME": str(home), "AWS_REGION": "us-east-1"}) as s:
        result = await s.execute("coder.input", {"text": "hi"})
        assert result["status"] == "failed", result
        message = result["error"]["message"]
        assert "AWS_ACCESS_KEY_ID" in message and str(home / ".aws" / "credentials") in message, message


async def test_a_wrong_secret_is_refused_by_the_fake_as_bedrock_would(ws: Path) -> None:
    home = settings(ws, {"provider": "bedrock"})
    with FakeBedrock("AKIDTEST", "the-right-secret", "us-east-1") as fake:
        env = {"HOME": str(home), "AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "a-wrong-secret",
               "AWS_REGION": "us-east-1", "ANTHROPIC_BEDROCK_BASE_URL": fake.url}  # fmt: skip
        async with lsp_session(ws, env=env) as s:
            result = await s.execute("coder.input", {"text": "hi"})
            assert result["status"] == "failed", result
            assert "AWS credentials" in result["error"]["message"], result
        assert fake.rejections == ["the signature does not match"]


async def test_a_turn_through_vertex_with_application_default_credentials(ws: Path) -> None:
    home = settings(ws, {"provider": "vertex"})
    with FakeVertex("my-project", "us-east5", "refresh-me") as fake:
        adc = home / "adc.json"
        adc.write_text(json.dumps({"type": "authorized_user", "client_id": "id", "client_secret": "s",
                                   "refresh_token": "refresh-me", "token_uri": f"{fake.url}/token"}))  # fmt: skip
        fake.push(calls(tool_call("read", {"path": "app.py"}, "toolu_1")), reply("It subtracts."))
        env = {"HOME": str(home), "GOOGLE_APPLICATION_CREDENTIALS": str(adc), "CLOUD_ML_REGION": "us-east5",
               "ANTHROPIC_VERTEX_PROJECT_ID": "my-project", "ANTHROPIC_VERTEX_BASE_URL": f"{fake.url}/v1"}  # fmt: skip
        async with lsp_session(ws, env=env) as s:
            result = await s.execute("coder.input", {"text": "what does add do?"})
            assert result["status"] == "completed", (result["error"], result["reply"])
            assert "It subtracts." in result["reply"]
            context = await s.execute("coder.input", {"text": "/context"})
            assert context["status"] == "completed" and context["data"]["source"] == "api", context
        assert fake.rejections == []
        assert fake.models == ["claude-sonnet-5-5", "claude-sonnet-5-5"]
        assert fake.tokens_given == 1  # refreshed once, then kept until it expires


async def test_vertex_without_credentials_says_what_and_where(ws: Path) -> None:
    home = settings(ws, {"provider": "vertex"})
    env = {"HOME": str(home), "ANTHROPIC_VERTEX_PROJECT_ID": "p", "CLOUD_ML_REGION": "us-east5"}
    async with lsp_session(ws, env=env) as s:
        result = await s.execute("coder.input", {"text": "hi"})
        assert result["status"] == "failed", result
        message = result["error"]["message"]
        assert "GOOGLE_APPLICATION_CREDENTIALS" in message and "application_default_credentials.json" in message


async def test_a_turn_through_a_gateway_with_its_token_and_headers(ws: Path) -> None:
    home = settings(ws, {"provider": "gateway"})
    with FakeAnthropicServer([reply("Through the gateway.")]) as fake:
        env = {"HOME": str(home), "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_AUTH_TOKEN": "gw-token",
               "ANTHROPIC_API_KEY": "not-for-the-gateway", "ANTHROPIC_CUSTOM_HEADERS": "X-Team: a"}  # fmt: skip
        async with lsp_session(ws, env=env) as s:
            result = await s.execute("coder.input", {"text": "hi"})
            assert result["status"] == "completed", result
        (sent,) = fake.message_requests
        assert sent.headers["authorization"] == "Bearer gw-token" and "x-api-key" not in sent.headers
        assert sent.headers["x-team"] == "a"


async def test_a_gateway_without_its_token_says_so(ws: Path) -> None:
    home = settings(ws, {"provider": "gateway"})
    async with lsp_session(ws, env={"HOME": str(home), "ANTHROPIC_BASE_URL": "https://gw.example"}) as s:
        result = await s.execute("coder.input", {"text": "hi"})
        assert result["status"] == "failed", result
        assert "ANTHROPIC_AUTH_TOKEN" in result["error"]["message"], result
