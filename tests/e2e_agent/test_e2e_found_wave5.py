"""What was found while verifying the last wave (issue 37, "Also found"), each end to end
with a real `coder-ls` over LSP against the strict fake Messages API.

- A subagent whose definition says `model: haiku` runs on the newest Haiku, not on the
  session's model.
- A model the Models API lists that the package's table does not know (released after
  it) becomes the default when it is the newest of its line: its line comes from the
  API's own data (its id and display name).
- A workspace whose `.coder` is a regular file degrades as a read-only `.coder` does:
  `!echo hi` runs, and the user is told once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_e2e import api_env, calls, tool_call
from anthropic_models import MODELS, FakeModel, listing
from anthropic_server import FakeAnthropicServer, reply
from harness import lsp_session

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


def user_folder(ws: Path) -> Path:
    folder = ws.parent / f".xdg-{ws.name}" / "coder"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.mark.parametrize(("where", "chosen"), [("claude", "config"), ("coder", "config"), ("claude", "/model")])
async def test_a_subagent_with_model_haiku_runs_on_haiku(ws: Path, where: str, chosen: str) -> None:
    folder = user_folder(ws)
    if chosen == "config":
        (folder / "config.json").write_text(json.dumps({"model": "claude-fake-1"}))
    home = ws.parent / "home"
    agents = home / ".claude" / "agents" if where == "claude" else folder / "agents"
    agents.mkdir(parents=True)
    (agents / "quick.md").write_text(
        "---\nname: quick\ndescription: Quick answers\ntools: Read\nmodel: haiku\n---\nAnswer in one line.\n"
    )
    with FakeAnthropicServer() as fake:
        fake.push(
            reply("quick answer", when="what is 2+2"),
            calls(tool_call("task", {"agent": "quick", "prompt": "what is 2+2"}, "t1")),
            reply("done"),
        )
        async with lsp_session(ws, env={**api_env(fake), "HOME": str(home)}) as s:
            if chosen == "/model":
                chose = await s.execute("coder.input", {"text": "/model claude-fake-1"})
                assert chose["status"] == "completed", chose
            result = await s.execute("coder.input", {"text": "ask the quick agent"})
            assert result["status"] == "completed", result
        models = [r.body["model"] for r in fake.message_requests]
        assert models[0] == "claude-fake-1", models
        sub = next(r for r in fake.message_requests if "what is 2+2" in json.dumps(r.body["messages"]))
        assert sub.body["model"] == "claude-haiku-5-5", models


async def test_a_listed_model_the_table_does_not_know_becomes_the_default(ws: Path) -> None:
    newer = FakeModel("claude-sonnet-9-9", "Claude Sonnet 9.9", "2027-06-01T00:00:00Z", "sonnet")
    models = [{k: v for k, v in m.items() if k != "line"} for m in listing((newer, *MODELS))]  # no `line` field
    with FakeAnthropicServer(models=models) as fake:
        async with lsp_session(ws, env=api_env(fake)) as s:
            await s.wait_for(lambda: [r for r in fake.requests if r.path.startswith("/v1/models")], 60)
            await s.wait_for(lambda: fake.pending == 0, 5)
            shown = await s.execute("coder.input", {"text": "/model"})
            for _ in range(50):
                if shown["data"]["source"] == "api":
                    break
                shown = await s.execute("coder.input", {"text": "/model"})
            assert shown["data"]["resolved"] == "claude-sonnet-9-9", shown["data"]["resolved"]
            fake.push(reply("Hello."))
            result = await s.execute("coder.input", {"text": "say hi"})
            assert result["status"] == "completed", result
            assert fake.message_requests[-1].body["model"] == "claude-sonnet-9-9"


async def test_a_coder_file_instead_of_a_folder_degrades_like_a_read_only_one(ws: Path) -> None:
    (ws / ".coder").write_text("not a folder\n")
    with FakeAnthropicServer() as fake:
        async with lsp_session(ws, env=api_env(fake)) as s:
            first = await s.execute("coder.input", {"text": "!echo hi"})
            assert first["status"] == "completed", first
            assert first["rawOutput"] == "hi\n", first
            second = await s.execute("coder.input", {"text": "!echo again"})
            assert second["status"] == "completed", second
            fake.push(reply("Hello."))
            turn = await s.execute("coder.input", {"text": "say hi"})
            assert turn["status"] == "completed", turn
            sessions = await s.execute("coder.input", {"text": "/sessions"})
            assert sessions["status"] == "completed", sessions
            said = [m.message for m in s.client.messages if ".coder" in m.message]
            assert len(said) == 1, said
