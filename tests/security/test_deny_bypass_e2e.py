"""A user's deny rule for `rm` end to end (issue 16): the agent (the real SDK against the
scripted endpoint) tries the forms that got past it; each is denied or asked about (the
user answers Deny), and every file survives."""

from __future__ import annotations

import json
from pathlib import Path

from anthropic_server import FakeAnthropicServer, reply
from e2e_agent.agent_e2e import APP, api_env, calls, result_text, tool_call, tool_results
from harness import init_git, lsp_session, trust_workspace_config

FORMS = [
    "/bin/r? v0",
    "/usr/bin/r[m] v1",
    "script -qc 'rm v2' /dev/null",
    "flock lockfile -c 'rm v3'",
    "rbash -c 'rm v4'",
    "echo v5 | sed 's/^/rm /e'",
    "sed -n '1e rm v6' app.py",
    "git -c alias.x='!rm v7' x",
    "printf 'rm v8' | sh",
    "c=RM; ${c,,} v9",
    "setpriv rm v10",
    "$'\\x72m' v11",
    "nice -n 5 rm v12",
    "timeout 5 rm v13",
    "find . -name v14 -exec rm {} +",
    "echo v15 | xargs -I{} rm {}",
    "env -S 'rm v16'",
    "unshare --user rm v17",
]


async def test_a_deny_rule_for_rm_catches_every_wrapper_and_indirection(tmp_path: Path) -> None:
    root = init_git(tmp_path / "ws", {"app.py": APP})
    (root / ".coder").mkdir(exist_ok=True)
    rules = [{"tool": "bash", "action": "deny", "command": "rm"}]
    (root / ".coder" / "config.json").write_text(json.dumps({"permissions": "yolo", "rules": rules}))
    trust_workspace_config(root)
    for i in range(len(FORMS)):
        (root / f"v{i}").write_text("keep\n")
    with FakeAnthropicServer() as fake:
        async with lsp_session(root, env=api_env(fake)) as s:
            s.answer_question = lambda p: "Deny"
            fake.push(calls(*(tool_call("bash", {"command": c}, f"t{i}") for i, c in enumerate(FORMS))), reply("ok"))
            result = await s.execute("coder.input", {"text": "clean"})
            assert result["status"] == "completed", result
            results = tool_results(fake.message_requests[1])
    survivors = {c: (root / f"v{i}").exists() for i, c in enumerate(FORMS)}
    assert all(survivors.values()), [c for c, kept in survivors.items() if not kept]
    for i, c in enumerate(FORMS):
        text = result_text(results[f"t{i}"])
        assert "Not allowed" in text or "did not run" in text or "Refused" in text, (c, text)
