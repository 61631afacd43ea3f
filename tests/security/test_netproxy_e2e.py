"""Network by domain end to end: a real LSP client, the real server, the agent's sandboxed
bash under the defaults with `sandbox.network` naming `localhost` only. A fetch from the
allowed name runs unasked and gets its answer through the server's proxy; a fetch the policy
cannot see the host of (it is inside a Python program) runs unasked too, the proxy refuses
it, and the offer to run outside names the refused domain."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "e2e_agent"))

from agent_e2e import APP, api_env, calls, result_text, tool_call, tool_results
from anthropic_server import reply
from harness import full_caps, init_git, lsp_session
from lsprotocol import types

from coder_ls.guard import sandbox

pytestmark = [
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
    pytest.mark.skipif(
        sandbox.bwrap_path() is None or shutil.which("curl") is None, reason="needs bubblewrap and curl"
    ),
]


# the host is not a literal the policy can read (a substitution builds it): it runs unasked
FETCH = 'curl -sS -o /dev/null "https://$(printf exa)mple.com/"'


async def test_domains_reach_the_allowed_name_and_name_the_refused_one(
    tmp_path: Path, fake: Any, host_http: int
) -> None:
    root = init_git(tmp_path / "ws", {"app.py": APP})
    fake.push(
        calls(tool_call("bash", {"command": f"env NO_PROXY= no_proxy= curl -sS http://localhost:{host_http}/"}, "c1")),
        calls(tool_call("bash", {"command": FETCH}, "c2")),
        reply("done"),
    )
    network = {"allowedDomains": ["localhost"]}
    async with lsp_session(root, env=api_env(fake), caps=full_caps()) as s:
        s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"coder": {"sandbox": {"network": network}}})
        )
        s.answer_question = lambda p: "Keep the failure"
        result = await s.execute("coder.input", {"text": "fetch them"})
        assert result["status"] == "completed", result
        asked = [q.message for q in s.questions]
    outs = {k: result_text(v) for k, v in tool_results(fake.message_requests[-1]).items()}
    assert "hello from the host" in outs["c1"], outs["c1"]
    assert len(asked) == 1, asked  # the allowed fetch was not asked about; the refused one only offered
    assert "example.com" in asked[0] and "Run this exact command again outside" in asked[0], asked
    assert "example.com" in outs["c2"] and "did not approve" in outs["c2"], outs["c2"]
