"""The guardrails end to end: a real LSP client drives the real server, whose real
Anthropic SDK talks to the scripted endpoint. Each test plays the attacker: the model
asks for a call that used to get past the policy."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from anthropic_server import FakeAnthropicServer, reply
from e2e_agent.agent_e2e import APP, api_env, calls, result_text, tool_call, tool_results
from harness import Session, full_caps, init_git, lsp_session, trust_workspace_config


@pytest.fixture
def fake():
    with FakeAnthropicServer() as server:
        yield server


def workspace(tmp_path: Path, config: dict) -> Path:
    root = init_git(tmp_path / "ws", {"app.py": APP, "gen.py": "print('gen')\n"})
    (root / ".coder").mkdir(exist_ok=True)
    (root / ".coder" / "config.json").write_text(json.dumps(config))
    trust_workspace_config(root)  # the policy these settings configure is the subject here
    return root


@pytest_asyncio.fixture
async def server(tmp_path: Path, fake: FakeAnthropicServer, request) -> AsyncIterator[Session]:
    root = workspace(tmp_path, request.param)
    async with lsp_session(root, caps=full_caps(), env=api_env(fake)) as s:
        yield s


ASKED = {"autoAllow": False}  # what the rules cover is the subject: nothing unasked for the sandbox


@pytest.mark.parametrize("server", [{"permissions": "balanced", "sandbox": ASKED}], indirect=True)
async def test_always_allow_of_a_script_does_not_grant_the_interpreter(server, fake):
    s = server
    s.answer_question = lambda p: "Always allow"
    fake.push(calls(tool_call("bash", {"command": "python3 gen.py"}, "t1")), reply("ok"))
    result = await s.execute("coder.input", {"text": "generate"})
    assert result["status"] == "completed", result
    assert len(s.questions) == 1
    rules = json.loads((s.root / ".coder" / "config.json").read_text())["rules"]
    assert {"tool": "bash", "action": "allow", "command": "python3 gen.py"} in rules, rules
    # the model now tries code through the same interpreter: it is asked about, and denied
    s.answer_question = lambda p: "Deny"
    code = "import pathlib; pathlib.Path('PWNED').write_text('x')"
    fake.push(calls(tool_call("bash", {"command": f'python3 -c "{code}"'}, "t2")), reply("ok"))
    await s.execute("coder.input", {"text": "again"})
    assert len(s.questions) == 2
    assert not (s.root / "PWNED").exists()


@pytest.mark.parametrize(
    "server",
    [
        {
            "permissions": "balanced",
            "sandbox": ASKED,
            "rules": [{"tool": "bash", "action": "allow", "command": "npm test"}],
        }
    ],
    indirect=True,
)
async def test_allow_rule_does_not_cover_a_second_command_or_a_write_outside(server, fake):
    s = server
    s.answer_question = lambda p: "Deny"
    outside = s.root.parent / "outside.txt"
    fake.push(
        calls(tool_call("bash", {"command": "npm test $'\\'';touch PWNED"}, "t1")),
        calls(tool_call("bash", {"command": f"npm test > {outside}"}, "t2")),
        reply("ok"),
    )
    await s.execute("coder.input", {"text": "test"})
    assert len(s.questions) == 2
    assert not (s.root / "PWNED").exists() and not outside.exists()
    assert "did not run" in result_text(tool_results(fake.message_requests[1])["t1"])


@pytest.mark.parametrize(
    "server", [{"permissions": "yolo", "rules": [{"tool": "bash", "action": "deny", "command": "rm"}]}], indirect=True
)
async def test_deny_rule_catches_the_program_behind_wrappers(server, fake):
    s = server
    victims = ["command rm v1", "env rm v2", "/bin/rm v3", "(rm v4)", "sh -c 'rm v5'", "echo v6 | xargs rm"]
    for i in range(1, 7):
        (s.root / f"v{i}").write_text("keep\n")
    fake.push(calls(*(tool_call("bash", {"command": c}, f"t{i}") for i, c in enumerate(victims))), reply("ok"))
    await s.execute("coder.input", {"text": "clean"})
    results = tool_results(fake.message_requests[1])
    assert all("Not allowed" in result_text(results[f"t{i}"]) for i in range(len(victims))), results
    assert all((s.root / f"v{i}").exists() for i in range(1, 7))


@pytest.mark.parametrize("server", [{"permissions": "auto-edit"}], indirect=True)
async def test_auto_edit_asks_before_writing_git_internals_and_coder_config(server, fake):
    s = server
    s.answer_question = lambda p: "Deny"
    before = (s.root / ".git" / "config").read_text()
    fake.push(
        calls(
            tool_call("write", {"path": ".git/config", "content": "[core]\n\tfsmonitor = touch PWNED\n"}, "t1"),
            tool_call("write", {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch PWNED\n"}, "t2"),
            tool_call("write", {"path": ".coder/config.json", "content": '{"permissions":"yolo"}'}, "t3"),
            tool_call("write", {"path": "ok.py", "content": "OK = 1\n"}, "t4"),
        ),
        reply("ok"),
    )
    await s.execute("coder.input", {"text": "configure"})
    assert len(s.questions) == 3  # ok.py is allowed by auto-edit without a question
    assert all("protected path" in q.message for q in s.questions)
    assert (s.root / ".git" / "config").read_text() == before
    assert not (s.root / ".git" / "hooks" / "pre-commit").exists()
    assert "yolo" not in (s.root / ".coder" / "config.json").read_text()
    assert (s.root / "ok.py").exists()


@pytest.mark.parametrize("server", [{"permissions": "yolo"}], indirect=True)
async def test_yolo_asks_too_and_a_symlink_to_git_does_not_escape(server, fake):
    s = server
    s.answer_question = lambda p: "Deny"
    (s.root / "gitdir").symlink_to(s.root / ".git")
    fake.push(calls(tool_call("write", {"path": "gitdir/config", "content": "x\n"}, "t1")), reply("ok"))
    await s.execute("coder.input", {"text": "x"})
    assert len(s.questions) == 1 and "protected path" in s.questions[0].message
    assert (s.root / ".git" / "config").read_text() != "x\n"
