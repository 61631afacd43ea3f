"""The hooks' parts below the end-to-end tests: matchers as Claude Code documents them,
how answers combine, the tool names and inputs at the edge, the settings parser's
problems, a plugin's hooks.json with ${CLAUDE_PLUGIN_ROOT}, and the runner's caps."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from coder_ls.hooks.answers import combine, interpret
from coder_ls.hooks.dispatch import Hooks
from coder_ls.hooks.matcher import matches, valid
from coder_ls.hooks.records import PreToolUse, Verdict
from coder_ls.hooks.runner import run_hook
from coder_ls.hooks.settings import HookProblem, HookSpec, load_hooks, parse_hooks
from coder_ls.hooks.toolmap import from_claude, to_claude

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "hooks"


@pytest.mark.parametrize(
    ("matcher", "value", "hit"),
    [
        ("", "Bash", True),
        ("*", "mcp__memory__create", True),
        ("Bash", "Bash", True),
        ("Bash", "BashOutput", False),  # a plain name is exact, not a prefix
        ("bash", "Bash", False),  # case-sensitive
        ("Edit|Write", "Write", True),
        ("Edit|Write", "MultiEdit", False),
        ("Notebook.*", "NotebookEdit", True),
        ("mcp__memory__.*", "mcp__memory__create_entities", True),
        ("mcp__memory__.*", "mcp__github__search", False),
        ("mcp__.*__write.*", "mcp__fs__write_file", True),
        ("[unclosed", "[unclosed", False),  # a broken regex matches nothing
    ],
)
def test_matchers_as_claude_code_documents_them(matcher: str, value: str, hit: bool) -> None:
    assert matches(matcher, value) is hit


def test_our_tool_names_match_too_and_a_broken_regex_is_invalid() -> None:
    assert matches("bash", "Bash", "bash")
    assert not valid("[unclosed") and valid("Edit|Write") and valid("mcp__.*")


def test_the_strictest_answer_wins_and_every_reason_is_kept() -> None:
    allow = Verdict(decision="allow", reason="fine", updated_input={"command": "ls"})
    deny = Verdict(decision="deny", blocked=True, reason="no")
    combined = combine([allow, deny, Verdict(context=("ctx",))])
    assert combined.decision == "deny" and combined.blocked and combined.reason == "no"
    assert combined.updated_input is None and combined.context == ("ctx",)  # a denied call keeps no rewrite
    assert combine([allow, Verdict(decision="ask", reason="why")]).decision == "ask"


def test_the_tool_input_both_ways(tmp_path: Path) -> None:
    ours = {"path": "src/a.py", "oldString": "a", "newString": "b", "replaceAll": True}
    shaped = to_claude("edit", ours, tmp_path)
    expected = {"file_path": str(tmp_path / "src/a.py"), "old_string": "a", "new_string": "b", "replace_all": True}
    assert shaped == expected
    assert from_claude("edit", shaped, tmp_path) == ours
    outside = from_claude("write", {"file_path": "/etc/passwd", "content": "x"}, tmp_path)
    assert outside["path"] == "/etc/passwd"  # left absolute: the policy judges it as given
    assert to_claude("mcp__srv__tool", {"someKey": 1}, tmp_path) == {"someKey": 1}


def test_bad_parts_are_dropped_alone_with_a_problem_naming_the_file() -> None:
    problems: list[HookProblem] = []
    value = {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]},
            {"matcher": "Bash", "hooks": [{"type": "command"}]},  # no command
            {"matcher": "Bash", "hooks": [{"type": "prompt", "prompt": "is it safe?"}]},
        ],
        "BeforeEverything": [],
        "Stop": "not a list",
    }
    specs = parse_hooks(value, "/x/settings.json", "user", problems)
    assert [s.command for s in specs] == ["true"]
    text = "\n".join(p.describe() for p in problems)
    assert "unknown hook event 'BeforeEverything'" in text and "Stop: must be a list" in text
    assert "PreToolUse[1]" in text and 'only `type: "command"` hooks run here' in text
    assert all("/x/settings.json" in p.describe() for p in problems)


def test_a_workspace_file_that_is_a_symlink_out_is_refused_even_when_trusted(tmp_path: Path) -> None:
    root, outside = tmp_path / "ws", tmp_path / "out"
    root.mkdir()
    (root / ".claude").mkdir()
    outside.mkdir()
    hooks = {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}
    (outside / "settings.json").write_text(json.dumps({"hooks": hooks}))
    (root / ".claude" / "settings.json").symlink_to(outside / "settings.json")
    specs, problems, waiting = load_hooks(root, {"HOME": str(tmp_path / "home")}, trusted=True)
    assert specs == [] and waiting == 0 and "leads outside the workspace" in problems[0].message


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
async def test_a_plugins_hooks_json_runs_its_script_from_its_root(tmp_path: Path) -> None:
    # karanb192/claude-code-hooks' block-dangerous-commands plugin, unchanged
    plugin = tmp_path / "plugins" / "block-dangerous-commands"
    shutil.copytree(CORPUS / "block-dangerous-commands", plugin)
    hooks = Hooks(tmp_path, {"HOME": str(tmp_path)}, trusted=lambda: False, secrets=lambda: (), show=lambda k, m: None)
    assert hooks.add_plugin(plugin) == []
    (spec,) = hooks.specs()
    assert spec.plugin_root == str(plugin) and str(plugin) in spec.command and spec.origin == "plugin"
    events: list[object] = []
    event = PreToolUse(tool_name="Bash", tool_input={"command": "git reset --hard HEAD~3"})
    verdict = await hooks.fire(event, events.append)
    assert verdict.decision == "deny" and "git reset --hard loses uncommitted work" in verdict.reason
    safe = await hooks.fire(PreToolUse(tool_name="Bash", tool_input={"command": "git status"}), events.append)
    assert safe.decision == "none" and len(events) == 2


async def test_output_is_capped_and_a_huge_stdout_does_not_hang(tmp_path: Path) -> None:
    spec = HookSpec("PreToolUse", "", "cat >/dev/null; head -c 5000000 /dev/zero | tr '\\0' x", 30, False, "t", "user")
    run = await run_hook(spec, b"{}", tmp_path, cap=1000)
    assert run.exit_code == 0 and run.stdout.startswith("x" * 1000) and run.stdout.endswith("[output truncated]")
    assert len(run.stdout) < 1100
    assert interpret("PreToolUse", run) == Verdict()  # not JSON: no answer


async def test_a_hook_that_never_reads_its_stdin_still_finishes(tmp_path: Path) -> None:
    spec = HookSpec("PreToolUse", "", "exit 0", 30, False, "t", "user")
    run = await run_hook(spec, b"x" * (4 * 1024 * 1024), tmp_path)  # more than a pipe holds
    assert run.exit_code == 0 and not run.failed


def _run(code: int | None, stdout: str = "", stderr: str = "", fail_closed: bool = False):
    from coder_ls.hooks.runner import HookRun

    spec = HookSpec("PreToolUse", "", "guard.sh", 60, fail_closed, "t", "user")
    return HookRun(spec, code, stdout, stderr, 1, error="" if code is not None else "timed out after 60s")


@pytest.mark.parametrize(
    ("event", "run", "decision", "blocked", "reason"),
    [
        ("PreToolUse", _run(2, stderr="no rm"), "deny", True, "no rm"),
        ("PostToolUse", _run(2, stderr="lint failed"), "block", False, "lint failed"),  # the tool ran already
        ("Stop", _run(2, stderr="tests first"), "block", True, "tests first"),
        ("UserPromptSubmit", _run(2, stderr="no secrets"), "block", True, "no secrets"),
        ("SessionStart", _run(2, stderr="meh"), "none", False, ""),  # cannot block: shown to the user
        ("PreToolUse", _run(1, stderr="Traceback"), "none", False, ""),  # Claude Code: non-blocking
        ("PreToolUse", _run(1, stderr="Traceback", fail_closed=True), "deny", True, "A guard hook failed"),
        ("PreToolUse", _run(None, fail_closed=True), "deny", True, "timed out after 60s"),
        ("PreToolUse", _run(0, '{"decision": "approve"}'), "allow", False, ""),  # the older form
        ("PreToolUse", _run(0, '{"decision": "block", "reason": "old"}'), "deny", True, "old"),
        ("PreToolUse", _run(0, "not json at all"), "none", False, ""),
    ],
)
def test_exit_codes_and_json_as_claude_code_defines_them(event, run, decision, blocked, reason) -> None:
    verdict = interpret(event, run)
    assert (verdict.decision, verdict.blocked) == (decision, blocked)
    assert reason in verdict.reason


def test_plain_stdout_is_context_only_where_claude_code_says_so() -> None:
    assert interpret("SessionStart", _run(0, "the build is green")).context == ("the build is green",)
    assert interpret("UserPromptSubmit", _run(0, "it is Friday")).context == ("it is Friday",)
    assert interpret("PreToolUse", _run(0, "chatter")).context == ()
    shown = interpret("SessionStart", _run(2, stderr="meh")).messages
    assert shown and "meh" in shown[0]
