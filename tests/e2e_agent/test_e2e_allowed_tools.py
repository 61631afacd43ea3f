"""`allowed-tools` of a command file, end to end and as an attacker: the granted commands
run without a question for the turn the command started, matched on the parsed line
(nothing chained, substituted or redirected out gets through), the grant expires with the
turn, a deny rule still wins, a bare `Bash` grants nothing, file tools by path glob.

What the grants cover is the subject, so `sandbox.autoAllow` is off here (with it, a line
the sandbox holds runs unasked whatever the grants say), and the ungranted lines are ones
that do not only read (a reader never asks)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_e2e import calls, result_text, tool_call, tool_results
from anthropic_server import reply

pytestmark = pytest.mark.asyncio(loop_scope="package")

ASKED = {"sandbox": {"autoAllow": False}}
ATTACKS = [
    "git add . ; touch PWNED1",
    "git add $(touch PWNED2)",
    "git add app.py > ../PWNED3",
    "git add -A && touch PWNED4",
    "git status | sh -c 'touch PWNED5'",
    "touch PWNED6",
    "git -c core.fsmonitor='touch PWNED7' add app.py",
]


def write_command(root: Path, name: str, front: str, body: str) -> Path:
    """The user's own command file (the harness's XDG_CONFIG_HOME): a workspace's grants
    nothing until trusted (tests/security/test_untrusted_commands.py)."""
    path = root.parent / f".xdg-{root.name}" / "coder" / "commands" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}\n---\n{body}\n")
    return path


@pytest.fixture
def stage(shared_session) -> Iterator[Path]:
    front = "description: Stage\nallowed-tools: Bash(git add:*), Bash(git status:*)"
    path = write_command(shared_session.root, "stage", front, "Stage it.")
    yield path
    path.unlink(missing_ok=True)


async def test_granted_commands_run_unasked_and_nothing_else_does(agent, stage):
    a = await agent(**ASKED)  # balanced: shell commands ask
    steps = [calls(tool_call("bash", {"command": "git add app.py"}, "t0"))]
    steps += [calls(tool_call("bash", {"command": "git status --short"}, "t1"))]
    steps += [calls(tool_call("bash", {"command": c}, f"x{i}")) for i, c in enumerate(ATTACKS)]
    a.fake.push(*steps, reply("staged"))
    # the granted `git add` runs sandboxed in the git lane: no question at all
    a.s.answer_question = lambda p: "Run outside the sandbox" if p.message.startswith("The sandbox stopped") else None
    result = await a.turn("/stage")
    assert result["status"] == "completed", result
    results = tool_results(a.fake.message_requests[-1])
    assert "exit code: 0" in result_text(results["t0"]) and "exit code: 0" in result_text(results["t1"])
    asked = [q.message for q in a.s.questions]
    assert not any(m.startswith("The sandbox stopped") for m in asked), asked
    assert len(asked) == len(ATTACKS), asked  # every attack was a question (answered: dismissed)
    for i in range(1, 8):
        assert not (a.root / f"PWNED{i}").exists() and not (a.root.parent / f"PWNED{i}").exists()


def permission_questions(a) -> list[str]:
    """The policy's questions (not the sandbox's offer to run a failed git write outside)."""
    return [q.message for q in a.s.questions if not q.message.startswith("The sandbox stopped")]


async def test_the_grant_ends_with_the_turn(agent, stage):
    a = await agent(**ASKED)  # `git status` only reads (never asked): the grant is seen on `git add`
    a.fake.push(calls(tool_call("bash", {"command": "git add app.py"}, "g1")), reply("ok"))
    await a.turn("/stage")
    assert permission_questions(a) == []
    a.fake.push(calls(tool_call("bash", {"command": "git add app.py"}, "g2")), reply("ok"))
    await a.turn("stage it again")
    assert len(permission_questions(a)) == 1  # a plain turn afterwards: asked again


async def test_a_deny_rule_still_wins(agent, stage):
    a = await agent(rules=[{"tool": "bash", "action": "deny", "command": "git add"}])
    a.fake.push(calls(tool_call("bash", {"command": "git add app.py"}, "d1")), reply("ok"))
    await a.turn("/stage")
    text = result_text(tool_results(a.fake.message_requests[-1])["d1"])
    assert "Not allowed" in text and "git add" in text and a.s.questions == []


async def test_a_bare_bash_grants_nothing_and_says_so(agent, shared_session):
    path = write_command(shared_session.root, "wide", "allowed-tools: Bash, Read", "Do anything.")
    try:
        a = await agent(**ASKED)
        a.fake.push(calls(tool_call("bash", {"command": "touch WIDE"}, "w1")), reply("ok"))
        await a.turn("/wide")
        assert len(a.s.questions) == 1 and not (a.root / "WIDE").exists()
        shown = [m.message for m in a.s.client.messages]
        assert any("wide.md" in m and "every command" in m for m in shown), shown
    finally:
        path.unlink(missing_ok=True)


async def test_file_tools_by_path_glob(agent, shared_session):
    path = write_command(shared_session.root, "docs", "allowed-tools: Write(docs/**)", "Write the docs.")
    try:
        a = await agent()
        a.fake.push(
            calls(tool_call("write", {"path": "docs/guide.md", "content": "# Guide\n"}, "f1")),
            calls(tool_call("write", {"path": "notes.md", "content": "x\n"}, "f2")),
            reply("written"),
        )
        await a.turn("/docs")
        results = tool_results(a.fake.message_requests[-1])
        assert not results["f1"].get("is_error"), results["f1"]
        assert len(a.s.questions) == 1 and "notes.md" in a.s.questions[0].message
    finally:
        path.unlink(missing_ok=True)


async def test_without_a_star_the_grant_is_that_command_only(agent, shared_session):
    path = write_command(shared_session.root, "st", "allowed-tools: [Bash(git count-objects)]", "Count.")
    try:
        a = await agent(**ASKED)  # `git status` only reads (never asked): a command that is not a reader
        a.fake.push(
            calls(tool_call("bash", {"command": "git count-objects"}, "e1")),
            calls(tool_call("bash", {"command": "git count-objects -v"}, "e2")),
            reply("ok"),
        )
        await a.turn("/st")
        assert len(a.s.questions) == 1 and "-v" in a.s.questions[0].message
    finally:
        path.unlink(missing_ok=True)
