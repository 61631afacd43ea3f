"""Grants you can see and take back (contract section 22): `/permissions` lists every rule
and every session grant with its source and an index; `/permissions revoke N` removes one,
from its file or from the session, and the next tool call is decided without it. A managed
rule cannot be removed; a bad index is a clear error. Over a real LSP client, against the
strict fake Messages API."""

from __future__ import annotations

import json

import pytest
from agent_e2e import api_env, calls, result_text, tool_call, tool_results
from anthropic_server import reply
from harness import init_git, lsp_session, server_env

from coder_ls.userdirs import user_config_path

pytestmark = pytest.mark.asyncio(loop_scope="package")

ASKED = {"sandbox": {"autoAllow": False}}  # the preset's questions, not the sandbox's autonomy


def entry(entries: list[dict], source: str, **match: str) -> dict:
    (found,) = [e for e in entries if e["source"] == source and all(e.get(k) == v for k, v in match.items())]
    return found


async def test_a_session_grant_is_listed_and_revoked_and_the_next_call_asks_again(agent):
    a = await agent(**ASKED)
    a.s.answer_question = lambda p: "Allow for session"
    a.fake.push(calls(tool_call("bash", {"command": "touch granted-1.txt"}, "toolu_g1")), reply("made it"))
    assert (await a.turn("make a file"))["status"] == "completed"
    assert len(a.s.questions) == 1 and (a.root / "granted-1.txt").exists()

    listed = await a.s.execute("coder.permissions", {})
    grant = entry(listed["data"]["entries"], "session", tool="bash", command="touch")
    assert grant["action"] == "allow" and "path" not in grant
    assert f"{grant['index']}. allow bash command 'touch' (session)" in listed["reply"]
    assert [e["index"] for e in listed["data"]["entries"]] == list(range(1, len(listed["data"]["entries"]) + 1))

    revoked = await a.s.execute("coder.permissions", {"args": f"revoke {grant['index']}"})
    assert revoked["status"] == "completed", revoked
    assert all(e["source"] != "session" for e in revoked["data"]["entries"]), revoked
    assert all(e["source"] != "session" for e in (await a.s.execute("coder.permissions", {}))["data"]["entries"])

    # the same call again: asked again (and denied, so nothing runs)
    a.s.answer_question = lambda p: "Deny"
    a.fake.push(calls(tool_call("bash", {"command": "touch granted-2.txt"}, "toolu_g2")), reply("denied"))
    assert (await a.turn("make another"))["status"] == "completed"
    assert len(a.s.questions) == 2
    assert not (a.root / "granted-2.txt").exists()


async def test_user_workspace_and_managed_rules_listed_revoked_or_refused(fake, tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    managed = tmp_path / "managed"
    managed.mkdir()
    managed_rules = {"rules": [{"tool": "bash", "action": "deny", "command": "rm"}]}
    (managed / "config.json").write_text(json.dumps(managed_rules))
    (root / ".coder").mkdir()
    ws_file = root / ".coder" / "config.json"
    ws_file.write_text(json.dumps({"rules": [{"tool": "bash", "action": "deny", "command": "curl"}]}))
    env = {**api_env(fake), "CODER_MANAGED_DIR": str(managed)}
    user_file = user_config_path(server_env(root, env))
    user_file.parent.mkdir(parents=True)
    user_rules = [
        {"tool": "bash", "action": "allow", "command": "touch"},
        {"tool": "edit", "action": "ask", "path": "*.md"},
    ]
    user_file.write_text(json.dumps({"rules": user_rules, **ASKED}))
    async with lsp_session(root, env=env) as s:
        listed = await s.execute("coder.permissions", {})
        entries = listed["data"]["entries"]
        assert [(e["index"], e["source"], e["tool"], e["action"]) for e in entries] == [
            (1, "user", "bash", "allow"),
            (2, "user", "edit", "ask"),
            (3, "workspace", "bash", "deny"),
            (4, "managed", "bash", "deny"),
        ], entries
        assert entries[1]["path"] == "*.md" and entries[3]["command"] == "rm"
        for line in ("1. allow bash command 'touch' (user)", "4. deny bash command 'rm' (managed)"):
            assert line in listed["reply"], listed["reply"]

        # the user rule decides the call: it runs unasked
        fake.push(calls(tool_call("bash", {"command": "touch by-rule.txt"}, "toolu_r1")), reply("done"))
        assert (await s.execute("coder.input", {"text": "touch"}))["status"] == "completed"
        assert s.questions == [] and (root / "by-rule.txt").exists()

        revoked = await s.execute("coder.permissions", {"args": "revoke 1"})
        assert revoked["status"] == "completed", revoked
        assert "allow bash command 'touch' (user)" in revoked["reply"]
        assert json.loads(user_file.read_text()) == {"rules": user_rules[1:], **ASKED}  # the file, edited
        assert [e["source"] for e in revoked["data"]["entries"]] == ["user", "workspace", "managed"]

        # the next call is decided without it: asked (denied: nothing runs), no restart
        s.answer_question = lambda p: "Deny"
        fake.push(calls(tool_call("bash", {"command": "touch after-revoke.txt"}, "toolu_r2")), reply("denied"))
        assert (await s.execute("coder.input", {"text": "touch again"}))["status"] == "completed"
        assert len(s.questions) == 1 and "touch after-revoke.txt" in s.questions[0].message
        assert not (root / "after-revoke.txt").exists()
        assert "did not run" in result_text(tool_results(fake.message_requests[-1])["toolu_r2"])

        # a workspace rule: removed from .coder/config.json
        ws_entry = entry((await s.execute("coder.permissions", {}))["data"]["entries"], "workspace")
        done = await s.execute("coder.permissions", {"args": f"revoke {ws_entry['index']}"})
        assert done["status"] == "completed", done
        assert json.loads(ws_file.read_text()) == {"rules": []}

        # a managed rule: refused, nothing lost
        before = (await s.execute("coder.permissions", {}))["data"]["entries"]
        managed_entry = entry(before, "managed")
        refused = await s.execute("coder.permissions", {"args": f"revoke {managed_entry['index']}"})
        assert refused["status"] == "failed" and refused["error"]["code"] == "managed_rule", refused
        assert "administrator" in refused["error"]["message"] and "cannot be removed" in refused["error"]["message"]
        assert json.loads((managed / "config.json").read_text()) == managed_rules
        assert (await s.execute("coder.permissions", {}))["data"]["entries"] == before

        # a bad index, and no index: clear errors, nothing changed
        for args, said in (("revoke 9", "no entry 9"), ("revoke 0", "no entry 0"), ("revoke x", "number of an entry"),
                           ("revoke", "one entry number")):  # fmt: skip
            bad = await s.execute("coder.permissions", {"args": args})
            assert bad["status"] == "failed" and bad["error"]["code"] == "invalid_argument", bad
            assert said in bad["error"]["message"], bad
        assert (await s.execute("coder.permissions", {}))["data"]["entries"] == before
