"""Permission policy: may this tool call run, must the user be asked, or is it refused?

Order: the agent's tool allowlist, then the tool-level risk checks (a refused shell
command, a path leaving the workspace: deny whatever the preset), then the rules of
the configuration (the most specific match wins, deny beats ask beats allow at equal
specificity), then the session's grants ("Allow for session"), then the preset.

A shell command is judged segment by segment (`a && b | c`): every segment must be
allowed for the command to be allowed, and one denied segment denies it. A segment
with command substitution never matches an allow prefix.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from coder_ls.agent.paths import PathError, display_path, glob_literal_length, glob_match, resolve_path
from coder_ls.protocol.config import Config, Rule
from coder_ls.protocol.events import ApprovalRequested, ApprovalResolved

if TYPE_CHECKING:
    from coder_ls.agent.tools.base import ToolContext

Action = Literal["allow", "ask", "deny"]
CommandCheck = Callable[[str, Path], "str | None"]

ALWAYS_ALLOWED = frozenset({"todoRead", "todoWrite"})
READ_TOOLS = frozenset({"read", "grep", "glob", "ls"})
WRITE_TOOLS = frozenset({"write", "edit", "multiEdit"})
SHELL_TOOLS = frozenset({"bash"})
PATH_TOOLS = READ_TOOLS | WRITE_TOOLS

CHOICES = ["Allow once", "Allow for session", "Always allow", "Deny"]
_SEVERITY: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}
# Commands whose second word (the subcommand) belongs in a granted prefix.
MULTI_WORD = frozenset(
    "git npm pnpm yarn bun npx cargo go docker kubectl pip pip3 poetry uv make dotnet gradle mvn deno "
    "rustup brew apt apt-get".split()
)
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "|&", ";;"})


class Decision(msgspec.Struct, frozen=True):
    action: Action
    reason: str = ""


class Grant(msgspec.Struct, frozen=True):
    """One "Allow for session": a tool plus an optional command prefix or path glob."""

    tool: str
    command: str | None = None
    path: str | None = None


class SessionGrants:
    """The grants of one session (kept in memory, dropped with the session)."""

    def __init__(self, grants: Collection[Grant] = ()) -> None:
        self._grants: set[Grant] = set(grants)

    def add(self, grant: Grant) -> None:
        self._grants.add(grant)

    def clear(self) -> None:
        self._grants.clear()

    def __iter__(self) -> Iterator[Grant]:
        return iter(sorted(self._grants, key=lambda g: (g.tool, g.command or "", g.path or "")))

    def __len__(self) -> int:
        return len(self._grants)

    def covers(self, tool: str, segment: list[str] | None, rel: str | None) -> bool:
        for g in self._grants:
            if g.tool == tool and _constraint_matches(g.command, g.path, segment, rel):
                return True
        return False


class ApprovalDecision(msgspec.Struct, frozen=True):
    allowed: bool
    decision: Literal["allowOnce", "allowSession", "alwaysAllow", "deny"]
    message: str = ""  # for the model when not allowed


# --- shell command segments and prefixes -------------------------------------------------


def _tokens(command: str) -> list[str]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: fall back to whitespace
        return command.split()


def command_segments(command: str) -> list[list[str]]:
    """The simple commands of a shell line, each as its words (`a && b; c` -> 3)."""
    segments: list[list[str]] = []
    for line in command.splitlines():
        current: list[str] = []
        tokens = _tokens(line)
        i = 0
        while i < len(tokens):
            token = tokens[i]
            i += 1
            nxt = tokens[i] if i < len(tokens) else ""
            if token == "&" and current and current[-1].endswith((">", "<")) and nxt:
                current[-1] += "&" + nxt  # `2>&1`, `<&3`: a redirection, not a separator
                i += 1
            elif token == "&" and nxt.startswith(">"):
                current.append("&" + nxt)  # `&>file`
                i += 1
            elif token in _SEPARATORS:
                if current:
                    segments.append(current)
                current = []
            else:
                current.append(token)
        if current:
            segments.append(current)
    return segments


def _has_substitution(command: str) -> bool:
    return "$(" in command or "`" in command or "<(" in command or ">(" in command


def command_prefix(words: list[str]) -> list[str]:
    """The words a grant or "Always allow" keeps: leading `VAR=x`, the program, and its
    subcommand for known multi-word tools (`git push`, `npm test`, `python -m pytest`)."""
    i = 0
    while i < len(words) and "=" in words[i] and not words[i].startswith("="):
        i += 1
    if i >= len(words):
        return list(words)
    program = words[i]
    base = program.rsplit("/", 1)[-1]
    end = i + 1
    if base.startswith("python") and words[end : end + 1] == ["-m"]:
        end = min(end + 2, len(words))
    elif base in MULTI_WORD and end < len(words) and not words[end].startswith("-"):
        end += 1
    return words[:end]


def _constraint_matches(
    command: str | None, path: str | None, segment: list[str] | None, rel: str | None
) -> bool:
    if command is not None:
        if segment is None:
            return False
        prefix = _tokens(command)
        return bool(prefix) and segment[: len(prefix)] == prefix
    if path is not None:
        return rel is not None and glob_match(path, rel)
    return True


def _specificity(rule: Rule, tool: str) -> tuple[int, int, int]:
    if rule.command is not None:
        size = len(_tokens(rule.command))
    elif rule.path is not None:
        size = glob_literal_length(rule.path)
    else:
        size = 0
    constrained = int(rule.command is not None or rule.path is not None)
    return (constrained, size, int(rule.tool == tool))


def _best_rule(rules: list[Rule], tool: str, segment: list[str] | None, rel: str | None) -> Rule | None:
    matching = [
        r for r in rules if r.tool in (tool, "*") and _constraint_matches(r.command, r.path, segment, rel)
    ]
    if not matching:
        return None
    return max(matching, key=lambda r: (_specificity(r, tool), _SEVERITY[r.action]))


def preset_action(preset: str, tool: str) -> Action:
    if tool in ALWAYS_ALLOWED or preset == "yolo":
        return "allow"
    if tool in READ_TOOLS:
        return "allow"
    if tool in WRITE_TOOLS and preset == "auto-edit":
        return "allow"
    return "ask"


# --- input access -------------------------------------------------------------------------


def _field(input: Any, name: str) -> Any:
    if isinstance(input, dict):
        return input.get(name)
    return getattr(input, name, None)


def _default_check(command: str, root: Path) -> str | None:
    from coder_ls.engine.safety import check_command

    result: str | None = check_command(command, root)
    return result


def _rel_for(tool: str, input: Any, root: Path, config: Config) -> tuple[str | None, str | None]:
    """(relative path for rules, refusal reason) of a file tool's input."""
    if tool not in PATH_TOOLS:
        return None, None
    raw = _field(input, "path")
    if not isinstance(raw, str) or not raw:
        raw = "."
    try:
        path = resolve_path(root, raw, allow_outside=config.allow_outside_workspace)
    except PathError as exc:
        return None, str(exc)
    return display_path(root, path), None


def decide(
    tool: str,
    input: Any,
    config: Config,
    session_grants: SessionGrants | None = None,
    *,
    root: Path,
    allowed_tools: Collection[str] | None = None,
    check_command: CommandCheck | None = None,
) -> Decision:
    """Whether `tool` may run with `input` (a typed struct or the model's dict)."""
    if allowed_tools is not None and tool not in allowed_tools:
        return Decision("deny", f"the tool {tool} is not available to this agent")
    grants = session_grants if (session_grants is not None and config.permissions != "strict") else None

    if tool in SHELL_TOOLS:
        command = _field(input, "command")
        if not isinstance(command, str) or not command.strip():
            return Decision("deny", "no command given")
        refusal = (check_command or _default_check)(command, root)
        if refusal:
            return Decision("deny", refusal)
        substitution = _has_substitution(command)
        actions: list[tuple[Action, str]] = []
        for segment in command_segments(command) or [[]]:
            rule = _best_rule(config.rules, tool, segment, None)
            if rule is not None and rule.action == "deny":
                actions.append(("deny", f"a rule denies `{' '.join(segment)}`"))
            elif substitution and (rule is None or rule.command is not None):
                # A prefix must not vouch for whatever `$(...)` runs.
                actions.append((preset_action(config.permissions, tool), "command substitution"))
            elif rule is not None and rule.action == "allow":
                actions.append(("allow", f"rule for `{rule.command or tool}`"))
            elif grants is not None and grants.covers(tool, segment, None):
                actions.append(("allow", "allowed for this session"))
            elif rule is not None:
                actions.append((rule.action, f"rule for `{rule.command or tool}`"))
            else:
                actions.append((preset_action(config.permissions, tool), f"preset {config.permissions}"))
        action, reason = max(actions, key=lambda a: _SEVERITY[a[0]])
        return Decision(action, reason)

    rel, refusal = _rel_for(tool, input, root, config)
    if refusal:
        return Decision("deny", refusal)
    rule = _best_rule(config.rules, tool, None, rel)
    if rule is not None and (rule.action != "ask" or grants is None or not grants.covers(tool, None, rel)):
        return Decision(rule.action, f"rule for {rule.tool} {rule.path or ''}".rstrip())
    if grants is not None and grants.covers(tool, None, rel):
        return Decision("allow", "allowed for this session")
    return Decision(preset_action(config.permissions, tool), f"preset {config.permissions}")


# --- asking the user ----------------------------------------------------------------------


def approval_scope(tool: str, input: Any, root: Path, config: Config | None = None) -> list[Grant]:
    """What "Allow for session" / "Always allow" cover: command prefixes or a path glob.

    A file inside a directory grants the directory (`src/**`); a file at the root
    grants that file only.
    """
    if tool in SHELL_TOOLS:
        command = _field(input, "command")
        if not isinstance(command, str):
            return [Grant(tool)]
        seen: list[Grant] = []
        for segment in command_segments(command):
            grant = Grant(tool, command=shlex.join(command_prefix(segment)))
            if grant not in seen:
                seen.append(grant)
        return seen or [Grant(tool)]
    if tool in PATH_TOOLS:
        rel, refusal = _rel_for(tool, input, root, config or Config())
        if rel is None or refusal:
            return [Grant(tool)]
        parent = rel.rpartition("/")[0]
        return [Grant(tool, path=f"{parent}/**" if parent else rel)]
    return [Grant(tool)]


def describe_call(tool: str, input: Any, root: Path) -> str:
    """A one-line summary for the approval question: "run `npm test`", "edit src/app.py"."""
    command = _field(input, "command")
    if tool in SHELL_TOOLS and isinstance(command, str):
        short = command if len(command) <= 200 else command[:200] + "…"
        return f"run `{short}`"
    path = _field(input, "path")
    if isinstance(path, str):
        verb = {"read": "read", "write": "write", "edit": "edit", "multiEdit": "edit"}.get(tool, tool)
        return f"{verb} {path}"
    return f"use {tool}"


async def approve(
    ctx: ToolContext,
    tool: str,
    input: Any,
    summary: str,
    persist_rule: Callable[[Rule], None],
    *,
    call_id: str | None = None,
) -> ApprovalDecision:
    """Ask the user about one tool call (`Allow once`, `Allow for session`, `Always allow`,
    `Deny`). A dismissed question is a denial; a cancelled task re-raises CancelledError."""
    cid = call_id if call_id is not None else ctx.call_id
    ctx.emit(ApprovalRequested(call_id=cid, tool=tool, summary=summary))
    try:
        choice = await ctx.host.ask("info", f"Coder wants to {summary} ({tool}).", list(CHOICES))
    except asyncio.CancelledError:
        ctx.emit(ApprovalResolved(call_id=cid, decision="cancelled"))
        raise
    scope = approval_scope(tool, input, ctx.root, ctx.config)
    if choice == "Allow once":
        result = ApprovalDecision(True, "allowOnce")
    elif choice == "Allow for session":
        for grant in scope:
            ctx.grants.add(grant)
        result = ApprovalDecision(True, "allowSession")
    elif choice == "Always allow":
        for grant in scope:
            persist_rule(Rule(tool=grant.tool, action="allow", command=grant.command, path=grant.path))
            ctx.grants.add(grant)
        result = ApprovalDecision(True, "alwaysAllow")
    else:
        why = "dismissed the question" if choice is None else "denied it"
        result = ApprovalDecision(
            False, "deny", f"The user {why}: the {tool} call did not run. Do not retry it as is."
        )
    ctx.emit(ApprovalResolved(call_id=cid, decision=result.decision))
    return result
