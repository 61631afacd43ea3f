"""Contract section 20 end to end, under the defaults (no `permissions` set: balanced,
`sandbox.autoAllow` on, bubblewrap): what the user is asked, and what ran. A real LSP
client drives the real server; the real SDK talks to the strict fake endpoint.

Readers run with no question; a line the sandbox holds runs in it with no question; deny
and ask rules, the refused-command check and protected paths keep their answers; what
cannot run sandboxed (the network it lacks) follows the preset, and the question says why;
`strict` asks for everything. Reader lines with a hidden writer are asked about where no
sandbox holds them.

With today's sandbox layout the workspace's top is not writable: a top-level write runs
unasked, fails on the sandbox, and the user's one question is the offer to run it outside,
which says so. `test_e2e_autoallow_layout.py` holds what the new layout (the top writable,
protected names pinned) makes of the same lines.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_e2e import APP, api_env, calls, result_text, tool_call, tool_results
from anthropic_server import FakeAnthropicServer, reply
from harness import full_caps, init_git, lsp_session

from coder_ls.guard import sandbox

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.skipif(sandbox.bwrap_path() is None, reason="bubblewrap does not work on this machine"),
]
_ids = iter(range(1, 10_000))


def steps(*commands: str) -> tuple[list[dict], list[str]]:
    ids = [f"toolu_aa{next(_ids)}" for _ in commands]
    return [calls(tool_call("bash", {"command": c}, i)) for c, i in zip(commands, ids, strict=True)], ids


async def run(a, *commands: str) -> list[str]:
    """One turn in which the model runs `commands`, one per step: their results."""
    pushed, ids = steps(*commands)
    a.fake.push(*pushed, reply("done"))
    result = await a.turn("go")
    assert result["status"] == "completed", result
    last = tool_results(a.fake.message_requests[-1])
    return [result_text(last[i]) for i in ids]


@pytest.fixture
def outside() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="coder-autoallow-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


async def test_readers_run_without_a_question(agent):
    a = await agent()  # the defaults: balanced, autoAllow
    a.s.answer_question = lambda p: "Deny"
    ls, status, grep, find = await run(a, "ls", "git status", "cat README.md | grep demo", "find . -name '*.py'")
    assert a.s.questions == [] and a.s.events_of("approvalRequested") == []
    assert "app.py" in ls and "On branch main" in status and "# demo" in grep and "./app.py" in find


async def test_a_write_the_policy_cannot_see_runs_unasked_and_the_offer_names_its_wall(agent):
    """A write inside a program's code is not visible to the policy: it runs unasked in the
    sandbox; when it hits a wall (outside the workspace) the one question is the offer to run
    it outside, saying it ran unasked and naming the path."""
    a = await agent()
    a.s.answer_question = lambda p: "Keep the failure"
    target = "/var/tmp/coder-autoallow-wall.txt"
    line = f"python3 -c \"open('{target}', 'w').write('x')\""
    (out,) = await run(a, line)
    (question,) = [q.message for q in a.s.questions]
    assert question.startswith(f"The sandbox stopped `{line}`: its output names {target}"), question
    assert "without a question (sandbox.autoAllow)" in question
    assert [e["summary"] for e in a.s.events_of("approvalRequested")] == [f"run `{line}` again outside the sandbox"]
    assert "the user did not approve running it outside" in out and not os.path.exists(target)  # noqa: ASYNC240


async def test_a_unit_test_run_needs_no_question(agent):
    a = await agent()
    a.s.answer_question = lambda p: "Deny"
    test = a.root / "test_autoallow_unit.py"
    test.write_text("import unittest\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        pass\n")
    try:
        (out,) = await run(a, "python3 -m unittest -q test_autoallow_unit")
        assert a.s.questions == [] and "OK" in out and "exit code: 0" in out, out
    finally:
        test.unlink()
        shutil.rmtree(a.root / "__pycache__", ignore_errors=True)


async def test_deny_and_ask_rules_and_the_refused_check_keep_their_answers(agent):
    rules = [
        {"tool": "bash", "action": "deny", "command": "touch"},
        {"tool": "bash", "action": "ask", "command": "git status"},
    ]
    a = await agent(rules=rules)
    a.s.answer_question = lambda p: "Deny"
    denied, asked, refused = await run(a, "touch src-denied.txt", "git status", "rm -rf /")
    assert "Not allowed" in denied and "touch" in denied and not (a.root / "src-denied.txt").exists()
    assert "did not run" in asked
    assert "Not allowed" in refused
    (question,) = [q.message for q in a.s.questions]  # the ask rule's, for a reader
    assert "git status" in question


def unwritten(path: Path) -> bool:
    """Nothing written at a protected name: absent, or the empty folder that holds it while
    the agent's shell lives (docs/security.md, "What is protected": placeholders)."""
    return not path.exists() or (path.is_dir() and not path.is_symlink() and not any(path.iterdir()))


async def test_a_protected_path_asks_and_is_never_written(agent):
    a = await agent()
    a.s.answer_question = lambda p: "Allow once"
    (out,) = await run(a, "echo 'export X=1' > .envrc")
    (question,) = [q.message for q in a.s.questions]  # the permission question only: no offer
    assert "echo 'export X=1' > .envrc" in question and "a protected path" in question and "direnv" in question
    assert unwritten(a.root / ".envrc")
    assert "not offered for a protected path" in out, out
    # allowed by the preset (yolo): still nothing written, still nothing offered
    a = await agent(permissions="yolo")
    (out,) = await run(a, "echo 'export X=1' > .envrc; echo done")
    assert a.s.questions == [] and unwritten(a.root / ".envrc")
    assert "done" in out and "not offered for a protected path" in out, out


async def test_the_network_the_sandbox_lacks_follows_the_preset(agent):
    a = await agent()
    a.s.answer_question = lambda p: "Deny"
    (out,) = await run(a, "curl -sS https://example.com")
    (question,) = [q.message for q in a.s.questions]
    assert "curl -sS https://example.com" in question
    assert "Asked because it needs the network (`curl`) and the sandbox has none" in question
    assert "did not run" in out


async def test_strict_asks_for_everything(agent):
    a = await agent(permissions="strict")
    a.s.answer_question = lambda p: "Deny"
    await run(a, "ls", "python3 -c 'print(1)'")
    assert len(a.s.questions) == 2


HIDDEN_WRITERS = [
    ("ls > hidden-ls.txt", "hidden-ls.txt"),
    ("find . -maxdepth 1 -fprint hidden-find.txt", "hidden-find.txt"),
    ("git -c core.pager='sh -c \"touch hidden-pager\"' log -1", "hidden-pager"),
    ("rg --pre ./hidden-evil x .", "hidden-evil-ran"),
    ("cat <(touch hidden-subst)", "hidden-subst"),
    ("ls $(touch hidden-pwned)", "hidden-pwned"),
]


async def test_readers_with_a_hidden_writer_ask_where_no_sandbox_holds_them(agent):
    a = await agent(sandbox={"mode": "off"})
    a.s.answer_question = lambda p: "Deny"
    (a.root / "hidden-evil").write_text("#!/bin/sh\ntouch hidden-evil-ran\ncat\n")
    (a.root / "hidden-evil").chmod(0o755)
    try:
        outs = await run(a, *(c for c, _ in HIDDEN_WRITERS), "ls")
        assert len(a.s.questions) == len(HIDDEN_WRITERS), [q.message for q in a.s.questions]
        for (command, made), out in zip(HIDDEN_WRITERS, outs, strict=False):
            assert "did not run" in out, (command, out)
            assert not (a.root / made).exists(), command
        assert "app.py" in outs[-1]  # a plain reader runs unasked with no sandbox too
    finally:
        (a.root / "hidden-evil").unlink()


async def test_with_no_sandbox_a_git_reader_asks_and_a_plain_one_does_not(agent):
    """git runs what the repository's config names (an fsmonitor on `status`): with no
    sandbox to hold it, a git reader is asked about; `ls` is not."""
    a = await agent(sandbox={"mode": "off"})
    a.s.answer_question = lambda p: "Deny"
    git_out, ls_out = await run(a, "git status --short", "ls")
    (question,) = [q.message for q in a.s.questions]
    assert "git status --short" in question and "did not run" in git_out, git_out
    assert "app.py" in ls_out


async def test_the_offer_comes_when_a_write_was_lost_though_the_line_exited_0(agent, outside):
    a = await agent(permissions="yolo")
    a.s.answer_question = lambda p: "Keep the failure"
    target = outside / "lost.txt"
    (out,) = await run(a, f"echo x > {target}; echo done")
    (question,) = [q.message for q in a.s.questions]
    assert question.startswith(f"The sandbox stopped `echo x > {target}; echo done`: its output names {target}")
    assert "done" in out and "exit code: 0" in out and not target.exists()


async def test_an_untrusted_workspace_cannot_turn_auto_allow_on(tmp_path: Path) -> None:
    root = init_git(tmp_path / "ws", {"app.py": APP})
    (root / "sub").mkdir()
    (root / ".coder").mkdir()
    (root / ".coder" / "config.json").write_text(json.dumps({"sandbox": {"autoAllow": True}}))
    user = tmp_path / f".xdg-{root.name}" / "coder" / "config.json"  # the harness's XDG_CONFIG_HOME
    user.parent.mkdir(parents=True)
    user.write_text(json.dumps({"sandbox": {"autoAllow": False}}))
    with FakeAnthropicServer() as fake:
        fake.push(calls(tool_call("bash", {"command": "touch sub/made"}, "t1")), reply("ok"))
        async with lsp_session(root, caps=full_caps(), env=api_env(fake)) as s:
            s.answer_question = lambda p: "Deny"
            result = await s.execute("coder.input", {"text": "go"})
            assert result["status"] == "completed", result
            assert len(s.questions) == 1 and "touch sub/made" in s.questions[0].message
            shown = [m.message for m in s.client.messages]
            assert any("sandbox.autoAllow" in m for m in shown), shown  # the warning names what was left out
    assert not (root / "sub" / "made").exists()
