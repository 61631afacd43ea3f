"""The `plan` preset (contract section 22): read, search, run read-only commands and ask
the user; never write, whatever the model tries, until the user approves a plan.

`policy.decide` asks `plan_decision` first when the preset is `plan`, before the rules,
the grants and the hooks' say: an allow rule, a session grant, a command's allowed-tools
or a PreToolUse hook's "allow" cannot open a write in plan mode, because nothing here is
ever "ask" (a question the user could answer "allow"). What is not named here is denied:

- the file tools that write (`WRITE_TOOLS`) and anything unknown: denied;
- `bash`: only a line every simple command of which is a known reader with no redirection
  that writes (`guard/shellparse/readers.py`), never in the background; a git reader only
  where the sandbox runs it (git runs what a hostile repository's config names);
  the session's sandbox is `read-only` in plan mode (`engine/planmode.py`), and the bash
  tool never offers to run outside it;
- an MCP tool only when its server declares it read-only (`annotations.readOnlyHint`);
- subagents (`task`), a long task's `plan`: denied (their own calls would be judged in
  plan mode too, but a subagent is work the plan is for);
- reading, searching, the todo list, skills, `ask_user` (a question, not a write),
  `exit_plan_mode`, and a background shell's output: allowed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from coder_ls.agent.grants import Decision, SandboxView
from coder_ls.guard.shellparse import ParsedLine, parse
from coder_ls.guard.shellparse.readers import not_read_only

PLAN_PRESET = "plan"
EXIT_PLAN_TOOL = "exit_plan_mode"
# the tools plan mode lets run as the preset would (the rules may still deny a read)
PLAN_READS = frozenset(
    {"read", "grep", "glob", "ls", "list_mcp_resources", "read_mcp_resource"}
    | {"diagnostics", "definition", "references", "symbols"}  # the editor's language servers
)
PLAN_FREE = frozenset(
    {"todoRead", "todoWrite", "skill", "ask_user", "shell_output", "shell_kill", "reportFindings", EXIT_PLAN_TOOL}
)
NO_WRITE = "plan mode: nothing is written before the user approves the plan"


def _field(input: Any, name: str) -> Any:
    if isinstance(input, Mapping):
        return input.get(name)
    return getattr(input, name, None)


def plan_decision(tool: str, input: Any, line: ParsedLine | None, sandbox: SandboxView | None) -> Decision | None:
    """Plan mode's answer for `tool`: a final allow or deny, or None for a read the usual
    rules go on to judge (a deny rule, a path leaving the workspace). `line`: a shell call's
    parsed command."""
    if tool in PLAN_READS:
        return None
    if tool in PLAN_FREE:
        return Decision("allow", "plan mode")
    if tool.startswith("mcp__"):
        # only the typed input carries it, set from the server's annotations; a raw mapping
        # is the model's own words and says nothing about what the tool does
        if not isinstance(input, Mapping) and getattr(input, "read_only", False) is True:
            return None  # the server says it only reads: the rules and the preset decide
        return Decision("deny", f"{NO_WRITE}; {tool} is not declared read-only by its MCP server (readOnlyHint)")
    if tool == "bash":
        return _shell(input, line, sandbox)
    return Decision("deny", f"{NO_WRITE}; {tool} is not available while planning")


def _shell(input: Any, line: ParsedLine | None, sandbox: SandboxView | None) -> Decision:
    if _field(input, "background"):
        return Decision("deny", f"{NO_WRITE}; no background commands while planning")
    command = _field(input, "command")
    if line is None:
        line = parse(command if isinstance(command, str) else "")
    if why := not_read_only(line):
        return Decision("deny", f"{NO_WRITE}; only read-only commands run while planning ({why})")
    runs = sandbox is not None and sandbox.runs
    if not runs and any(c.program == "git" for c in line.commands):
        # git runs what the repository's config names (a pager, an fsmonitor): only sandboxed
        return Decision("deny", f"{NO_WRITE}; git runs only inside the sandbox while planning, and none runs now")
    return Decision("allow", "plan mode: a read-only command", sandbox="sandboxed" if runs else "")
