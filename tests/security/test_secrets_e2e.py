"""Secrets: the API key (and `secrets.envNames`) never reach a child process, the session
files or the log, through a real LSP client against the real server and SDK."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "e2e_agent"))

import harness
import pytest
from agent_e2e import APP, calls, result_text, tool_call, tool_results
from anthropic_server import FakeAnthropicServer, reply
from harness import init_git, lsp_session
from lsprotocol import types

pytestmark = pytest.mark.filterwarnings("ignore:Unknown progress token")

KEY = "sk-ant-test-0123456789abcdefSECRETKEY"
TOKEN = "ghp_MYOWNTOKEN_9876543210zyxwv"


def _everything_under(path: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in path.rglob("*") if p.is_file() and p.suffix != ".db")


async def test_no_child_log_or_session_file_sees_the_key(tmp_path, monkeypatch):
    root = init_git(tmp_path / "ws", {"app.py": APP})
    log_file = tmp_path / "server.log"
    monkeypatch.setattr(harness, "SERVER", [*harness.SERVER, "--log-level", "debug", "--log-file", str(log_file)])
    with FakeAnthropicServer() as fake:
        env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake.url, "MY_TOKEN": TOKEN}
        async with lsp_session(root, env=env) as s:
            s.client.workspace_did_change_configuration(
                types.DidChangeConfigurationParams(
                    settings={"coder": {"permissions": "yolo", "secrets": {"envNames": ["MY_TOKEN"]}}}
                )
            )
            shell = await s.execute("coder.shell", {"command": "env; echo END-OF-ENV"})
            assert "END-OF-ENV" in shell["reply"], shell
            assert "PATH=" in shell["reply"]
            fake.push(
                calls(tool_call("bash", {"command": "env; printenv ANTHROPIC_API_KEY; echo done-env"}, "toolu_e1")),
                reply("looked"),
            )
            result = await s.execute("coder.input", {"text": "show me the environment"})
            assert result["status"] == "completed", result
            agent_saw = result_text(tool_results(fake.message_requests[1])["toolu_e1"])
            assert "done-env" in agent_saw and "PATH=" in agent_saw
            # the SDK did use the key: it reached the endpoint
            assert KEY in str(fake.message_requests[0].headers), fake.message_requests[0].headers.keys()
    for secret in (KEY, TOKEN):
        assert secret not in shell["reply"]
        assert secret not in agent_saw
        assert secret not in _everything_under(root / ".coder")
        assert secret not in log_file.read_text()
    assert "ANTHROPIC_API_KEY" not in shell["reply"] and "MY_TOKEN" not in agent_saw
    assert (root / ".coder" / "sessions").is_dir()
