"""Hooks end to end (issue 18): Claude Code's settings format and hook scripts, unchanged,
driving a real server through a real LSP client, the strict fake Messages API calling
the tools. The workspace is trusted here (tests/e2e_agent/test_e2e_hooks_trust.py attacks
the untrusted one); the user's own hooks live in a private HOME's `~/.claude/settings.json`.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from agent_e2e import APP, all_text, calls, result_text, tool_call, tool_results
from anthropic_server import FakeAnthropicServer, reply
from harness import Session, init_git
from hooks_e2e import CORPUS, dump_stdin, fresh, group, home_of, hook_runs, hooks_server, inputs, shown, write_settings

pytestmark = pytest.mark.asyncio(loop_scope="package")
PY = sys.executable


@pytest.fixture(scope="module")
def hook_fake() -> AsyncIterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="package")
async def hs(tmp_path_factory: pytest.TempPathFactory, hook_fake: FakeAnthropicServer) -> AsyncIterator[Session]:
    root = init_git(tmp_path_factory.mktemp("hooks") / "ws", {"app.py": APP, "README.md": "# demo\n"})
    async with hooks_server(root, hook_fake) as s:
        result = await s.execute("coder.input", {"text": "/trust"})
        assert result["status"] == "completed", result
        yield s


@pytest.fixture
def project(hs: Session) -> AsyncIterator[Path]:
    """The workspace's `.claude/settings.json` (removed after the test)."""
    yield hs.root / ".claude" / "settings.json"
    shutil.rmtree(hs.root / ".claude", ignore_errors=True)
    user = home_of(hs.root) / ".claude"
    shutil.rmtree(user, ignore_errors=True)


@pytest.fixture(autouse=True)
def no_rejections(hook_fake: FakeAnthropicServer) -> AsyncIterator[None]:
    hook_fake.take_rejections()
    yield
    assert hook_fake.take_rejections() == []


async def test_a_claude_code_bash_guard_blocks_the_call_and_tells_the_model(hs, hook_fake, project):
    # anthropics/claude-code examples/hooks/bash_command_validator_example.py, exit 2
    write_settings(project, {"PreToolUse": group(f"{PY} {CORPUS}/bash_command_validator_example.py", "Bash")})
    await fresh(hs, hook_fake)
    marker = hs.root / "grep-ran"
    hook_fake.push(calls(tool_call("bash", {"command": f"grep -n add app.py && touch {marker}"}, "g1")), reply("ok"))
    result = await hs.execute("coder.input", {"text": "find add"})
    assert result["status"] == "completed", result
    block = tool_results(hook_fake.message_requests[1])["g1"]
    assert block.get("is_error") and "Use 'rg' (ripgrep) instead of 'grep'" in result_text(block)
    assert not marker.exists()
    assert ("PreToolUse", "deny") in hook_runs(hs)
    # a command the guard lets through runs
    hook_fake.push(calls(tool_call("bash", {"command": "echo fine-$((1+1))"}, "g2")), reply("ok"))
    await hs.execute("coder.input", {"text": "echo"})
    assert "fine-2" in result_text(tool_results(hook_fake.message_requests[-1])["g2"])


async def test_a_file_guard_sees_claude_codes_names_and_an_absolute_file_path(hs, hook_fake, project):
    log = hs.root.parent / "pre.jsonl"
    hooks = {
        "PreToolUse": [
            *group(f"{PY} {CORPUS}/file_guard_example.py", "Edit|Write|MultiEdit"),
            *group(dump_stdin(log), "Write"),
        ]
    }
    write_settings(project, hooks)
    await fresh(hs, hook_fake)
    hook_fake.push(calls(tool_call("write", {"path": ".env", "content": "TOKEN=1\n"}, "w1")), reply("ok"))
    await hs.execute("coder.input", {"text": "write .env"})
    block = tool_results(hook_fake.message_requests[1])["w1"]
    assert block.get("is_error") and "Environment configuration file" in result_text(block)
    assert not (hs.root / ".env").exists()
    (seen,) = inputs(log)
    assert seen["hook_event_name"] == "PreToolUse" and seen["tool_name"] == "Write"
    assert seen["tool_input"] == {"file_path": str(hs.root / ".env"), "content": "TOKEN=1\n"}
    assert seen["tool_use_id"] == "w1" and seen["cwd"] == str(hs.root)
    assert seen["session_id"] == result_session(hs) and seen["transcript_path"].endswith(".jsonl")
    assert seen["permission_mode"] == "bypassPermissions"


def result_session(s: Session) -> str:
    changed = s.events_of("sessionChanged") or [{}]
    return changed[-1].get("sessionId") or s.events[-1]["sessionId"]


async def test_session_start_and_prompt_hooks_add_context_for_the_model(hs, hook_fake, project):
    (hs.root / ".claude").mkdir(exist_ok=True)
    (hs.root / ".claude" / "project-context.md").write_text("House rule: tabs, never spaces.")
    log = hs.root.parent / "prompt.jsonl"
    write_settings(
        project,
        {
            "SessionStart": group(f"bash {CORPUS}/session_start_context_loader_example.sh"),
            "UserPromptSubmit": [*group("echo 'The build is green.'"), *group(dump_stdin(log))],
        },
    )
    await fresh(hs, hook_fake)
    hook_fake.push(reply("noted"), reply("again"))
    await hs.execute("coder.input", {"text": "hello there"})
    first = all_text(hook_fake.message_requests[0])
    assert "hello there" in first and "House rule: tabs, never spaces." in first and "The build is green." in first
    (seen,) = inputs(log)
    assert seen["hook_event_name"] == "UserPromptSubmit" and seen["prompt"] == "hello there"
    await hs.execute("coder.input", {"text": "second"})
    second = hook_fake.message_requests[1].body["messages"][-1]
    text = (
        "".join(b.get("text", "") for b in second["content"])
        if isinstance(second["content"], list)
        else second["content"]
    )
    assert "House rule" not in text  # SessionStart fired once for the session
    assert [e for e, _ in hook_runs(hs)].count("SessionStart") == 1


async def test_a_prompt_hook_that_blocks_stops_the_turn_before_the_model(hs, hook_fake, project):
    script = "cat > /dev/null; echo 'no secrets in prompts' >&2; exit 2"
    write_settings(project, {"UserPromptSubmit": group(script)})
    await fresh(hs, hook_fake)
    result = await hs.execute("coder.input", {"text": "my password is hunter2"})
    assert result["status"] == "failed" and result["error"]["code"] == "hook_blocked", result
    assert "no secrets in prompts" in result["error"]["message"]
    assert hook_fake.message_requests == []


async def test_post_tool_use_sees_the_response_and_its_block_reason_reaches_the_model(hs, hook_fake, project):
    log = hs.root.parent / "post.jsonl"
    answer = '{"decision": "block", "reason": "lint failed: line too long"}'
    write_settings(
        project,
        {
            "PostToolUse": [*group(dump_stdin(log), "Bash"), *group(f"cat >/dev/null; echo '{answer}'", "bash")],
            "PostToolUseFailure": group(dump_stdin(log)),
        },
    )
    await fresh(hs, hook_fake)
    hook_fake.push(
        calls(tool_call("bash", {"command": "echo out-$((2*3))"}, "p1"), tool_call("read", {"path": "nope.py"}, "p2")),
        reply("ok"),
    )
    await hs.execute("coder.input", {"text": "run"})
    results = tool_results(hook_fake.message_requests[1])
    assert "out-6" in result_text(results["p1"]) and "Hook feedback: lint failed: line too long" in result_text(
        results["p1"]
    )
    post, failure = inputs(log)
    assert post["hook_event_name"] == "PostToolUse" and "out-6" in post["tool_response"]["output"]
    assert failure["hook_event_name"] == "PostToolUseFailure" and failure["tool_name"] == "Read"
    assert failure["tool_input"]["file_path"] == str(hs.root / "nope.py") and failure["error"]


async def test_a_stop_hook_keeps_the_turn_going_once(hs, hook_fake, project):
    log = hs.root.parent / "stop.jsonl"
    script = (
        f'tee -a {log} | {PY} -c "import json,sys; d=json.load(sys.stdin); '
        "print('' if d['stop_hook_active'] else json.dumps({'decision':'block','reason':'run the tests first'}))\"; "
        f"echo >> {log}"
    )
    write_settings(project, {"Stop": group(script)})
    await fresh(hs, hook_fake)
    hook_fake.push(reply("all done"), reply("tests pass, done"))
    result = await hs.execute("coder.input", {"text": "fix it"})
    assert result["status"] == "completed" and result["reply"] == "tests pass, done", result
    assert "run the tests first" in all_text(hook_fake.message_requests[1])
    assert [d["stop_hook_active"] for d in inputs(log)] == [False, True]
    assert inputs(log)[0]["last_assistant_message"] == "all done"


async def test_updated_input_is_used_and_decided_on_again(hs, hook_fake, project):
    rewrite = (
        'cat >/dev/null; echo \'{"hookSpecificOutput": {"hookEventName": "PreToolUse", '
        '"permissionDecision": "allow", "updatedInput": {"command": "echo rewritten && sudo true"}}}\''
    )
    write_settings(project, {"PreToolUse": group(rewrite, "Bash")})
    await fresh(hs, hook_fake, rules=[{"tool": "bash", "action": "deny", "command": "sudo"}])
    hook_fake.push(calls(tool_call("bash", {"command": "echo original"}, "u1")), reply("ok"))
    await hs.execute("coder.input", {"text": "run"})
    block = tool_results(hook_fake.message_requests[1])["u1"]
    # the hook's input replaced the model's, and the deny rule still judged it
    assert block.get("is_error") and "sudo" in result_text(block) and "original" not in result_text(block)


ALLOW_ALL = (
    'cat >/dev/null; echo \'{"hookSpecificOutput": {"hookEventName": "PreToolUse", '
    '"permissionDecision": "allow", "permissionDecisionReason": "trust me"}}\''
)


async def test_a_hooks_allow_never_beats_a_deny_rule_the_command_check_or_a_protected_path(hs, hook_fake, project):
    write_settings(
        project,
        {
            "PreToolUse": group(ALLOW_ALL),
            "PermissionRequest": group(ALLOW_ALL.replace("PreToolUse", "PermissionRequest")),
        },
    )
    await fresh(
        hs, hook_fake, permissions="balanced", rules=[{"tool": "bash", "action": "deny", "command": "git push"}]
    )
    hs.answer_question = lambda p: "Deny"
    hook_fake.push(
        calls(
            tool_call("bash", {"command": "git push origin main"}, "a1"),
            tool_call("bash", {"command": "echo hi > /dev/sda"}, "a2"),
            tool_call("write", {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"}, "a3"),
            tool_call("write", {"path": "notes.txt", "content": "hello\n"}, "a4"),
        ),
        reply("ok"),
    )
    await hs.execute("coder.input", {"text": "go"})
    results = tool_results(hook_fake.message_requests[1])
    assert results["a1"].get("is_error") and "git push" in result_text(results["a1"])  # the deny rule
    assert results["a2"].get("is_error") and "Not allowed" in result_text(results["a2"])  # the refused-command check
    assert results["a3"].get("is_error") and not (hs.root / ".git" / "hooks" / "pre-commit").exists()
    assert any(".git" in q.message for q in hs.questions)  # the protected path was asked about, not allowed
    # where only the preset would ask, the hook's allow stands in for the question
    assert not results["a4"].get("is_error") and (hs.root / "notes.txt").read_text() == "hello\n"
    assert not any("notes.txt" in q.message for q in hs.questions)
    (hs.root / "notes.txt").unlink()


async def test_a_permission_request_hook_denies_and_a_notification_hook_hears_of_the_question(hs, hook_fake, project):
    log = hs.root.parent / "notify.jsonl"
    deny = (
        'cat >/dev/null; echo \'{"hookSpecificOutput": {"hookEventName": "PermissionRequest", '
        '"decision": {"behavior": "deny", "message": "not on fridays"}}}\''
    )
    write_settings(project, {"PermissionRequest": group(deny, "Write"), "Notification": group(dump_stdin(log))})
    await fresh(hs, hook_fake, permissions="strict")
    hook_fake.push(calls(tool_call("write", {"path": "x.txt", "content": "x\n"}, "n1")), reply("ok"))
    await hs.execute("coder.input", {"text": "write"})
    block = tool_results(hook_fake.message_requests[1])["n1"]
    assert block.get("is_error") and "not on fridays" in result_text(block)
    assert hs.questions == [] and not (hs.root / "x.txt").exists()
    (note,) = inputs(log)
    assert note["hook_event_name"] == "Notification" and "Write" in note["message"]


async def test_a_crashing_guard_is_shown_and_fails_closed_only_when_asked(hs, hook_fake, project):
    user = home_of(hs.root) / ".claude" / "settings.json"  # the user's own settings
    crash = "cat >/dev/null; echo 'Traceback: KeyError tool_input' >&2; exit 1"
    write_settings(user, {"PreToolUse": [*group(crash, "Bash"), *group(crash + " # closed", "Write", failClosed=True)]})
    await fresh(hs, hook_fake)
    hook_fake.push(
        calls(
            tool_call("bash", {"command": "echo open-$((3+4))"}, "f1"),
            tool_call("write", {"path": "guarded.txt", "content": "x\n"}, "f2"),
        ),
        reply("ok"),
    )
    await hs.execute("coder.input", {"text": "go"})
    results = tool_results(hook_fake.message_requests[1])
    assert "open-7" in result_text(results["f1"])  # as in Claude Code: exit 1 does not block...
    assert results["f2"].get("is_error") and "guard hook failed" in result_text(results["f2"])
    assert not (hs.root / "guarded.txt").exists()  # ...unless the hook says failClosed
    messages = shown(hs)
    assert (
        messages.count("failed: exited with 1: Traceback: KeyError tool_input") == 2
        and "not blocking" in messages
        and "failClosed" in messages
    )
    assert [d for e, d in hook_runs(hs) if e == "PreToolUse"] == ["failed", "failed"]


async def test_cancel_kills_a_running_hook_and_its_children(hs, hook_fake, project):
    pids = hs.root.parent / "hook-pids"
    slow = f"cat >/dev/null; sleep 60 & echo $! > {pids}; wait"
    write_settings(project, {"PreToolUse": group(slow, "Bash", timeout=120)})
    await fresh(hs, hook_fake)
    hook_fake.push(calls(tool_call("bash", {"command": "echo never"}, "c1")), reply("ok"))
    token = "hook-cancel"
    pending = asyncio.ensure_future(hs.execute("coder.input", {"text": "run"}, token=token))
    await hs.wait_for(lambda: pids.exists() and pids.read_text().strip(), timeout=20)
    child = int(pids.read_text())
    hs.cancel_progress(token)
    result = await asyncio.wait_for(pending, 10)
    assert result["status"] == "cancelled", result
    await hs.wait_for(lambda: not _alive(child), timeout=5)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


async def test_a_slow_hook_times_out_and_the_secret_never_reaches_it(hs, hook_fake, project):
    env_dump = hs.root.parent / "hook-env"
    write_settings(
        project,
        {"PreToolUse": [*group(f"cat >/dev/null; env > {env_dump}", "Bash"), *group("sleep 30", "Bash", timeout=1)]},
    )
    await fresh(hs, hook_fake)
    hook_fake.push(calls(tool_call("bash", {"command": "echo after-timeout"}, "t1")), reply("ok"))
    loop = asyncio.get_running_loop()
    start = loop.time()
    await hs.execute("coder.input", {"text": "run"})
    assert loop.time() - start < 15
    assert "after-timeout" in result_text(tool_results(hook_fake.message_requests[1])["t1"])
    assert "timed out after 1s" in shown(hs)
    env = env_dump.read_text()
    assert "ANTHROPIC_API_KEY" not in env and f"CLAUDE_PROJECT_DIR={hs.root}" in env


SKILL = """\
---
description: Release with a guard
hooks:
  PreToolUse:
    - matcher: Bash
      hooks:
        - type: command
          command: "cat >> {log}; echo >> {log}"
---
Cut a release.
"""

AGENT = """\
---
name: checker
description: Checks things
tools: bash
hooks:
  PreToolUse:
    - matcher: "Bash"
      hooks:
        - type: command
          command: "cat >/dev/null; echo 'checker may not run commands' >&2; exit 2"
---
You check things.
"""


async def test_a_skills_own_hooks_run_during_its_turn_only(hs, hook_fake, project):
    log = hs.root.parent / "skill-hook.jsonl"
    skill = hs.root / ".claude" / "skills" / "release" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(SKILL.format(log=log))
    await fresh(hs, hook_fake)
    hook_fake.push(calls(tool_call("bash", {"command": "echo in-skill"}, "k1")), reply("released"))
    result = await hs.execute("coder.input", {"text": "/release"})
    assert result["status"] == "completed", result
    (seen,) = inputs(log)
    assert seen["tool_input"]["command"] == "echo in-skill"
    hook_fake.push(calls(tool_call("bash", {"command": "echo after-skill"}, "k2")), reply("ok"))
    await hs.execute("coder.input", {"text": "plain prompt"})
    assert len(inputs(log)) == 1  # the skill's hook ended with its turn


async def test_an_agents_own_hooks_and_subagent_stop(hs, hook_fake, project):
    log = hs.root.parent / "substop.jsonl"
    agent = hs.root / ".claude" / "agents" / "checker.md"
    agent.parent.mkdir(parents=True)
    agent.write_text(AGENT)
    write_settings(project, {"SubagentStop": group(dump_stdin(log), "checker"), "Stop": group(dump_stdin(log))})
    await fresh(hs, hook_fake)
    hook_fake.push(
        {**calls(tool_call("bash", {"command": "echo from-checker"}, "s1")), "when": "check the build"},
        {**reply("checked"), "when": "checker may not run commands"},
        calls(tool_call("task", {"agent": "checker", "prompt": "check the build"}, "t1")),
        reply("done"),
    )
    result = await hs.execute("coder.input", {"text": "use the checker"})
    assert result["status"] == "completed", result
    sub_results = [r for r in hook_fake.message_requests if "checker may not run commands" in all_text(r)]
    assert sub_results, "the agent's PreToolUse hook did not block its bash call"
    sub_runs = [e for e in hs.events_of("hookRan") if e["event"] in ("PreToolUse", "SubagentStop")]
    assert sub_runs and all(e.get("agentId") for e in sub_runs)  # shown inside the subagent's block
    substop, stop = inputs(log)
    assert substop["hook_event_name"] == "SubagentStop" and substop["agent_type"] == "checker"
    assert stop["hook_event_name"] == "Stop" and stop["last_assistant_message"] == "done"
    # the agent's hook is its own: the main turn's bash is not blocked by it
    hook_fake.push(calls(tool_call("bash", {"command": "echo main-$((5+5))"}, "m1")), reply("ok"))
    await hs.execute("coder.input", {"text": "run"})
    assert "main-10" in result_text(tool_results(hook_fake.message_requests[-1])["m1"])


async def test_pre_compact_hears_the_trigger_and_the_instructions(hs, hook_fake, project):
    log = hs.root.parent / "compact.jsonl"
    write_settings(project, {"PreCompact": group(dump_stdin(log), "manual")})
    await fresh(hs, hook_fake)
    hook_fake.push(reply("the answer is 42"), reply("- asked: the answer (42)"))
    await hs.execute("coder.input", {"text": "what is the answer?"})
    result = await hs.execute("coder.compact", {"args": "keep the number"})
    assert result["status"] == "completed", result
    (seen,) = inputs(log)
    assert seen["hook_event_name"] == "PreCompact" and seen["trigger"] == "manual"
    assert seen["custom_instructions"] == "keep the number"


async def test_session_end_fires_when_the_session_is_replaced(hs, hook_fake, project):
    log = hs.root.parent / "end.jsonl"
    write_settings(project, {"SessionEnd": group(dump_stdin(log)), "SessionStart": group(dump_stdin(log))})
    await fresh(hs, hook_fake)
    hook_fake.push(reply("hi"))
    await hs.execute("coder.input", {"text": "hello"})
    first = result_session(hs)
    result = await hs.execute("coder.new", {})
    assert result["status"] == "completed", result
    start, end = [d for d in inputs(log) if d["session_id"] == first]  # (fresh() ended the previous one)
    assert (start["hook_event_name"], start["source"]) == ("SessionStart", "startup")
    assert (end["hook_event_name"], end["reason"], end["session_id"]) == ("SessionEnd", "clear", first)


async def test_continue_false_stops_the_call_and_ends_the_turn(hs, hook_fake, project):
    stop = 'cat >/dev/null; echo \'{"continue": false, "stopReason": "budget exhausted"}\''
    write_settings(project, {"PreToolUse": group(stop, "Bash")})
    await fresh(hs, hook_fake)
    marker = hs.root / "ran-anyway"
    hook_fake.push(calls(tool_call("bash", {"command": f"touch {marker}"}, "x1")))
    result = await hs.execute("coder.input", {"text": "go"})
    assert result["status"] == "completed", result
    assert not marker.exists() and len(hook_fake.message_requests) == 1  # no further model step
    assert any("budget exhausted" in e["message"] for e in hs.events_of("notice"))
    hook_fake.push(reply("next turn works"))
    assert (await hs.execute("coder.input", {"text": "again"}))["reply"] == "next turn works"


async def test_a_projects_own_guard_script_reads_file_path_under_claude_project_dir(hs, hook_fake, project):
    # xstaudi/Beatgrid-Master .claude/hooks/import-guard.sh: jq, CLAUDE_PROJECT_DIR, an absolute file_path
    write_settings(project, {"PreToolUse": group(f"bash {CORPUS}/import-guard.sh", "Edit|Write")})
    await fresh(hs, hook_fake)
    hook_fake.push(
        calls(
            tool_call("write", {"path": "node_modules/lib/index.js", "content": "x\n"}, "i1"),
            tool_call("write", {"path": "src/ok.js", "content": "ok\n"}, "i2"),
        ),
        reply("ok"),
    )
    await hs.execute("coder.input", {"text": "write"})
    results = tool_results(hook_fake.message_requests[1])
    assert results["i1"].get("is_error") and "node_modules darf nicht editiert werden" in result_text(results["i1"])
    assert not (hs.root / "node_modules").exists()
    assert not results["i2"].get("is_error") and (hs.root / "src" / "ok.js").read_text() == "ok\n"
    shutil.rmtree(hs.root / "src")
