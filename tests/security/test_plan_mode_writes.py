"""Plan mode never writes (contract section 22): an attack corpus through the one policy.

The write attempts are not written here: they are gathered from what the repository
already holds as writing, running or destructive lines (the read-only classifier's
negatives in tests/security/test_readers.py, the refused-command corpora in
tests/security/corpus.py, test_refused_writes.py and the manual corpus generated from
the `--help` of cp, mv, install, ln, rsync and tar), and from the policy's own list of
the tools that write. Each must be denied in the `plan` preset, never asked about (a
question is a way to a write: the user may answer "allow"), whatever allow rules,
session grants, a command's allowed-tools or a sandbox say.

Without plan mode (the same calls in `balanced`) most are asked about: every test here
fails without it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_ls.agent.grants import Grant, SandboxView, SessionGrants
from coder_ls.agent.policy import WRITE_TOOLS, decide
from coder_ls.agent.tools.mcp import McpArgs
from coder_ls.protocol.actions import ToolGrant
from coder_ls.protocol.config import Config, Rule
from security.corpus import dangerous
from security.corpus_manual.generate import corpus as manual_corpus
from security.test_readers import ATTACKS, READERS
from security.test_refused_writes import HOST, OVERWRITES, TARGET_OPTIONS

ROOT = Path("/work/ws-plan-corpus")


def writing_lines() -> list[str]:
    lines = list(ATTACKS)  # the read-only classifier's attack corpus: none of it only reads
    lines += OVERWRITES + HOST + TARGET_OPTIONS + dangerous()
    lines += [x.line for x in manual_corpus()]
    lines += ["sed -i 's/a/b/' app.py", "git commit -am wip", "touch new.txt", "python3 -c \"open('x','w')\""]
    return list(dict.fromkeys(lines))


LINES = writing_lines()
PLAN = Config(permissions="plan")
# everything that could open a write elsewhere: rules allowing it all, the user's grants
OPEN = Config(
    permissions="plan",
    rules=[Rule(tool="*", action="allow"), Rule(tool="bash", action="allow"), Rule(tool="write", action="allow")],
)
SANDBOX = SandboxView(runs=True, mode="read-only", writable=(), network="none")


def grants() -> SessionGrants:
    g = SessionGrants()
    for tool in (*WRITE_TOOLS, "bash", "task"):
        g.add(Grant(tool))
    return g


def plan_action(tool: str, inp: object, config: Config = PLAN, **kw: object) -> tuple[str, str]:
    d = decide(tool, inp, config, root=ROOT, check_command=lambda c, r: None, **kw)  # type: ignore[arg-type]
    return d.action, d.reason


def test_the_corpus_is_large_and_comes_from_the_repository() -> None:
    assert len(LINES) > 1500, len(LINES)


@pytest.mark.parametrize("line", LINES)
def test_a_writing_line_is_denied_in_plan_mode(line: str) -> None:
    for config, g in ((PLAN, None), (OPEN, grants())):
        for sandbox in (None, SANDBOX):
            action, reason = plan_action("bash", {"command": line}, config, session_grants=g, sandbox=sandbox)
            assert action == "deny", (line, action, reason)
    turn = (ToolGrant(tool="bash", command=line.split()[0] if line.split() else "x"),)
    action, _ = plan_action("bash", {"command": line}, OPEN, turn_grants=turn)
    assert action == "deny", line


@pytest.mark.parametrize("tool", sorted(WRITE_TOOLS))
@pytest.mark.parametrize("path", ["app.py", "new/dir/x.py", ".git/config", ".coder/config.json", "../outside.txt"])
def test_every_write_tool_is_denied_whatever_opens_it(tool: str, path: str) -> None:
    inp = {"path": path, "content": "x", "oldString": "a", "newString": "b", "edits": []}
    for config, g in ((PLAN, None), (OPEN, grants())):
        action, reason = plan_action(tool, inp, config, session_grants=g, turn_grants=(ToolGrant(tool=tool),))
        assert action == "deny", (tool, path, action, reason)


@pytest.mark.parametrize(
    ("tool", "inp"),
    [
        ("task", {"prompt": "write the files", "agent": "general"}),
        ("plan", {"steps": []}),  # a long task's plan starts subagents
        ("mcp__fs__write_file", McpArgs(values={"path": "x"}, read_only=False)),
        ("mcp__fs__write_file", {"values": {"path": "x"}, "read_only": "yes"}),  # only the tool sets it, as a bool
        ("some_new_tool", {}),
        ("bash", {"command": "ls", "background": True}),
    ],
)
def test_what_is_not_a_read_is_denied(tool: str, inp: object) -> None:
    for config, g in ((PLAN, None), (OPEN, grants())):
        action, reason = plan_action(tool, inp, config, session_grants=g, turn_grants=(ToolGrant(tool=tool),))
        assert action == "deny", (tool, action, reason)


@pytest.mark.parametrize("line", READERS)
def test_a_reader_runs_and_is_never_asked(line: str) -> None:
    """The other half: planning needs to look around (git only where a sandbox runs it)."""
    action, reason = plan_action("bash", {"command": line}, sandbox=SANDBOX)
    assert action == "allow", (line, reason)


def test_reads_search_questions_and_read_only_mcp_tools_run() -> None:
    for tool, inp in [
        ("read", {"path": "app.py"}),
        ("grep", {"pattern": "x"}),
        ("glob", {"pattern": "*.py"}),
        ("ls", {}),
        ("ask_user", {"questions": []}),
        ("todoWrite", {"todos": []}),
        ("exit_plan_mode", {"plan": "1. do it"}),
    ]:
        assert plan_action(tool, inp)[0] == "allow", tool
    assert plan_action("mcp__fs__read_file", McpArgs(values={}, read_only=True), OPEN)[0] == "allow"


def test_a_deny_rule_still_denies_a_read_in_plan_mode() -> None:
    config = Config(permissions="plan", rules=[Rule(tool="bash", action="deny", command="cat")])
    assert plan_action("bash", {"command": "cat README.md"}, config)[0] == "deny"
    config = Config(permissions="plan", rules=[Rule(tool="read", action="deny", path="secret/**")])
    assert plan_action("read", {"path": "secret/a"}, config)[0] == "deny"


def test_git_readers_run_only_in_a_sandbox() -> None:
    assert plan_action("bash", {"command": "git status"})[0] == "deny"
    action = decide(
        "bash", {"command": "git status"}, PLAN, root=ROOT, sandbox=SANDBOX, check_command=lambda c, r: None
    )
    assert (action.action, action.sandbox) == ("allow", "sandboxed")  # the bash tool refuses without one


@pytest.mark.parametrize(
    ("tool", "inp"), [("write", {"path": "a.py", "content": "x"}), ("bash", {"command": "touch a"})]
)
def test_a_hooks_allow_does_not_open_a_write(tool: str, inp: dict[str, str]) -> None:
    """A PreToolUse hook's `allow` settles only the preset's own questions: plan mode asks none."""
    from coder_ls.agent.hooksite import fold
    from coder_ls.hooks.records import Verdict

    decision = decide(tool, inp, PLAN, root=ROOT, check_command=lambda c, r: None)
    assert fold(decision, Verdict(decision="allow"), "plan").action == "deny"


def test_a_model_cannot_declare_an_mcp_tool_read_only_in_its_own_input():
    from coder_ls.agent.planpolicy import plan_decision

    said = plan_decision("mcp__srv__delete_all", {"read_only": True, "values": {}}, None, None)
    assert said is not None and said.action == "deny"
