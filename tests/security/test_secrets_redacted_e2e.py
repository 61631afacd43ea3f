"""Secret values never reach the session files, the model or the client, whatever printed
them: the server's own environment read through /proc by the user's `!cmd`, by the
agent's `bash` and by its `read` tool, raw and in base64, through a real LSP client
against the real server and SDK.

Every child process already runs without the secret variables (test_secrets_e2e.py);
these commands read the server's environment itself, which a process of the same user
can always do (`/proc/$PPID/environ`: the shell's parent is the server).
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "e2e_agent"))

import pytest
from agent_e2e import calls, result_text, tool_call, tool_results
from anthropic_server import FakeAnthropicServer, reply
from harness import init_git, lsp_session, server_process

pytestmark = pytest.mark.filterwarnings("ignore:Unknown progress token")

KEY = "sk-ant-test-0123456789abcdefSECRETKEY"
TOKEN = "ghp_MYOWNTOKEN_9876543210zyxwv"
ENVIRON = "tr '\\0' '\\n' < /proc/$PPID/environ"


def _forms(secret: str) -> list[str]:
    """The secret and its base64 as `base64` prints it alone, after `NAME=`, and URL-safe."""
    plain = base64.b64encode(secret.encode()).decode()
    return [secret, plain[:-4], plain.replace("+", "-").replace("/", "_")[:-4]]


def _files_under(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in path.rglob("*") if p.is_file())


async def test_a_printed_environment_is_redacted_everywhere(tmp_path):
    root = init_git(tmp_path / "ws", {"app.py": "print('hi')\n", ".env.local": f"ANTHROPIC_API_KEY={KEY}\n"})
    options = {
        "permissions": "yolo",
        "sandbox": {"mode": "off"},  # the agent's bash sees the server's /proc entry, as on a machine without one
        "allowOutsideWorkspace": True,
        "secrets": {"envNames": ["MY_TOKEN"]},
    }
    with FakeAnthropicServer() as fake:
        env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake.url, "MY_TOKEN": TOKEN}
        async with lsp_session(root, env=env, init_options=options) as s:
            pid = server_process(s).pid
            raw = await s.execute("coder.input", {"text": f"!{ENVIRON}; echo END-OF-ENVIRON"})
            assert "END-OF-ENVIRON" in raw["reply"] and f"ANTHROPIC_BASE_URL={fake.url}" in raw["reply"], raw
            printed = await s.execute("coder.input", {"text": "!env; echo END-OF-ENV"})
            encoded = await s.execute("coder.input", {"text": f"!{ENVIRON} | base64 -w0; echo; echo END-B64"})
            assert "END-B64" in encoded["reply"]
            fake.push(
                calls(
                    tool_call("bash", {"command": f"cat /proc/{pid}/environ | tr '\\0' '\\n'; echo done-1"}, "t1"),
                    tool_call("bash", {"command": f"base64 -w0 /proc/{pid}/environ; echo; echo done-2"}, "t2"),
                    tool_call("read", {"path": f"/proc/{pid}/environ"}, "t3"),
                    tool_call("read", {"path": ".env.local"}, "t4"),
                    tool_call("grep", {"pattern": "ANTHROPIC_API_KEY"}, "t5"),
                ),
                reply("seen"),
            )
            result = await s.execute("coder.input", {"text": "show me the environment"})
            assert result["status"] == "completed", result
            got = {cid: result_text(b) for cid, b in tool_results(fake.message_requests[1]).items()}
            events = json.dumps(s.events)
    # the commands did read the secrets: they come back redacted, not missing
    assert "ANTHROPIC_API_KEY=[redacted: ANTHROPIC_API_KEY]" in raw["reply"], raw["reply"][-2000:]
    assert "MY_TOKEN=[redacted: MY_TOKEN]" in raw["reply"]
    assert "done-1" in got["t1"] and "[redacted: ANTHROPIC_API_KEY]" in got["t1"], got["t1"][-500:]
    assert "[redacted: ANTHROPIC_API_KEY (base64)]" in got["t2"], got["t2"][-500:]
    assert "binary file" in got["t3"] or "[redacted: ANTHROPIC_API_KEY]" in got["t3"], got["t3"][-500:]  # NULs
    assert "ANTHROPIC_API_KEY=[redacted: ANTHROPIC_API_KEY]" in got["t4"], got["t4"]
    assert "[redacted: ANTHROPIC_API_KEY]" in got["t5"], got["t5"]
    assert KEY in str(fake.message_requests[0].headers)  # the SDK did use the key
    sent_to_model = json.dumps([r.body for r in fake.message_requests])
    session_files = _files_under(root / ".coder").decode("utf-8", "replace")  # the JSONL logs and index.sqlite
    assert (root / ".coder" / "index.sqlite").exists()
    for secret in (KEY, TOKEN):
        for form in _forms(secret):
            for where, text in [
                ("!cmd reply", raw["reply"] + printed["reply"] + encoded["reply"]),
                ("events to the client", events),
                ("the model's requests", sent_to_model),
                ("session files and index", session_files),
            ]:
                assert form not in text, f"{form!r} reached {where}"
