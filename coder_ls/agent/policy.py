"""Permission policy: may this tool call run, must the user be asked, or is it refused?

It judges the tool's typed input (`agent/toolcall.py` parses the model's before anything
else; callers outside the pipeline may still pass the model's dict).

Order: the agent's tool allowlist; the tool-level risk checks (a refused shell command,
a path leaving the workspace: deny whatever the preset); the protected paths (a file
tool writing `.git/` or `.coder/` is always asked about, whatever the preset, rules or
grants say); then the rules, which refine the preset: a matching `deny` wins, a matching
`ask` beats the preset's `allow`, a matching `allow` (or a session grant) beats the
preset's `ask`. Where the preset would ask about a shell line (contract section 20): a
read-only line runs unasked in every preset but `strict` (`shellparse/readers.py`); with
`sandbox.autoAllow`, a line the sandbox will run and can hold runs unasked too, while one
it cannot (a visible write outside its writable folders or into a protected path, the
network it lacks or a domain it refuses, no sandbox) is asked about, saying why.

Shell commands are matched on the structure `guard.shellparse` gives, never on raw
text. A deny rule for a program catches it wherever it runs: behind wrappers (`env`,
`sudo`, `xargs`, absolute paths), in `sh -c`, `eval`, functions and substitutions. An
allow rule (or grant) covers a line only when every simple command in it is covered,
every word is a literal, no redirection writes outside the workspace (or somewhere
unknown), and the line parsed. A prefix never covers the `-c`/`-e` flags, and for the
programs in `grantscope.EXACT_PROGRAMS` (interpreters, shells, wrappers, destructive tools) a rule
covers only the exact command it names.
"""

from __future__ import annotations

import asyncio
import os
import shlex
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import msgspec

from coder_ls.agent.grants import Action, Decision, Grant, SandboxView, SessionGrants
from coder_ls.agent.grantscope import covers as _covers
from coder_ls.agent.grantscope import (
    grant_words,
    rule_words,
)
from coder_ls.agent.grantscope import prefix_covers as _prefix_covers
from coder_ls.agent.grantscope import program_name as _program
from coder_ls.agent.grantscope import skip_assignments as _skip_assignments
from coder_ls.agent.paths import PathError, display_path, resolve_path, skill_file
from coder_ls.agent.planpolicy import PLAN_PRESET, plan_decision
from coder_ls.globs import glob_match
from coder_ls.guard.protected import protected_name, protected_reason_for
from coder_ls.guard.protected import reason as protected_why
from coder_ls.guard.shellparse import INTERPRETERS, Command, ParsedLine, parse, reach
from coder_ls.guard.shellparse.indirect import GIT_BUILTINS, code_strings, git_subcommand, is_interpreter
from coder_ls.guard.shellparse.readers import QUIET_TARGETS, is_read_only
from coder_ls.protocol.actions import ToolGrant
from coder_ls.protocol.config import Config, Rule
from coder_ls.protocol.events import ApprovalRequested, ApprovalResolved

if TYPE_CHECKING:
    from coder_ls.engine.host import Host
    from coder_ls.protocol.events import Event


class Asking(Protocol):
    """What asking the user about a tool call reads (a tool's `ToolContext` has it): the
    policy names these few fields instead of importing the tools it judges."""

    @property
    def root(self) -> Path: ...
    @property
    def config(self) -> Config: ...
    @property
    def host(self) -> Host: ...
    @property
    def grants(self) -> SessionGrants: ...
    @property
    def call_id(self) -> str: ...
    @property
    def actor(self) -> str: ...
    @property
    def emit(self) -> Callable[[Event], None]: ...


CommandCheck = Callable[[str, Path], "str | None"]

# no side effects of their own (a subagent's tools go through the policy one by one)
# (shell_output and shell_kill only read or end a background shell the policy let start)
ALWAYS_ALLOWED = frozenset(
    {"todoRead", "todoWrite", "skill", "reportFindings", "task", "plan", "ask_user", "shell_output", "shell_kill"}
)
# the editor's language servers (contract section 23): they only read, as grep does
EDITOR_TOOLS = frozenset({"diagnostics", "definition", "references", "symbols"})
READ_TOOLS = frozenset({"read", "grep", "glob", "ls"}) | EDITOR_TOOLS
WRITE_TOOLS = frozenset({"write", "edit", "multiEdit"})  # every tool that writes files
SHELL_TOOLS = frozenset({"bash"})
PATH_TOOLS = READ_TOOLS | WRITE_TOOLS
WEB_TOOLS = frozenset({"web_fetch"})  # judged by domain (`agent/webpolicy.py`)

CHOICES = ["Allow once", "Allow for session", "Always allow", "Deny"]
_SEVERITY: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}


class ApprovalDecision(msgspec.Struct, frozen=True):
    allowed: bool
    decision: Literal["allowOnce", "allowSession", "alwaysAllow", "deny"]
    message: str = ""  # for the model when not allowed


# --- shell commands -----------------------------------------------------------------------


def _deny_covers(prefix: tuple[str, ...], cmd: Command, *, nested: bool = True) -> bool:
    """A deny rule for `prefix` catches the program as written, unwrapped, or by basename,
    and in code given to an interpreter."""
    k = _skip_assignments(prefix)
    core = prefix[k:]
    if not core:
        return True
    for words in (cmd.written, cmd.words):
        start = _skip_assignments(words)
        rest = words[start:]
        if len(rest) >= len(core) and _program(rest[0]) == _program(core[0]) and rest[1 : len(core)] == core[1:]:
            return True
    return nested and _code_runs(core, cmd)


def _code_runs(core: tuple[str, ...], cmd: Command) -> bool:
    """Code given to an interpreter that hands the denied program to a shell or to exec:
    a quoted string that is its name (`["rm", "x"]`) or a command line running it
    (`os.system("rm x")`)."""
    if cmd.program is None or not is_interpreter(cmd.program, INTERPRETERS):
        return False
    code = " ".join(a for a in cmd.args if a is not None) + "\n" + (cmd.stdin or "")
    for text in code_strings(code):
        if _program(text.strip()) == _program(core[0]):
            return True
        if " " in text and any(_deny_covers(core, c, nested=False) for c in parse(text).commands):
            return True
    return False


def _unseen_program(line: ParsedLine) -> str | None:
    """Why a deny rule cannot see every program the line runs: a name that is an expansion
    or a glob (`${c,,}`, `/bin/r?`), text a shell or sed runs that is not a literal, or a
    line that does not parse (`r[m]`). Such a line is asked about, never run unasked."""
    if any(c.program is None for c in line.commands):
        return "a program that is not a literal (an expansion or a glob)"
    if line.unknown_scripts:
        return f"text run as a command that cannot be seen ({line.unknown_scripts[0]})"
    if not line.parsed:
        return "a line that does not parse"
    for c in line.commands:
        if c.program == "git" and (sub := git_subcommand(list(c.words))) != "" and sub not in GIT_BUILTINS:
            return f"`git {sub or '…'}`, a git alias or `git-*` program,"
    return None


def _writes_outside(line: ParsedLine, root: Path) -> str | None:
    real_root = root.resolve()
    moves = any(c.program in ("cd", "pushd", "popd") for c in line.commands)
    for redirect in line.redirects:
        if not redirect.writes:
            continue
        target = redirect.target
        if moves and target is not None and not target.startswith("/") and not target.isdigit():
            return f"a redirection writes to {target} after a `cd`, which may be anywhere"
        if target is None:
            return "a redirection writes to a target that is not a literal"
        if target in ("/dev/null", "/dev/stdout", "/dev/stderr") or target.isdigit():
            continue
        if target.startswith("~") or "$" in target:
            return f"a redirection writes to {target}, outside the workspace"
        real = Path(os.path.realpath(root / target))
        if not real.is_relative_to(real_root):
            return f"a redirection writes to {target}, outside the workspace"
        if _protected(real, real_root):
            return f"a redirection writes to {target}, a protected path"
    return None


def _turn_denial(commands: Sequence[Command], turn: Collection[ToolGrant]) -> Decision | None:
    """A turn's deny grant catching a command, or a forbidden word in a command its allow
    grant covers (`/commit` runs `git commit`, never `git commit --amend`)."""
    for g in turn:
        prefix = _words_of(g.command)
        if g.tool != "bash" or prefix is None:
            continue
        for c in commands:
            if g.action == "deny" and _deny_covers(prefix, c):
                return Decision("deny", f"this command may not run `{g.command or 'any command'}`")
            if g.action == "allow" and g.forbidden and _prefix_covers(prefix, c.written):
                if bad := next((w for w in c.written if w is not None and _forbidden(w, g.forbidden)), None):
                    return Decision("deny", f"this command may not run `{g.command}` with `{bad}`")
    return None


def _forbidden(word: str, forbidden: tuple[str, ...]) -> bool:
    """`word` is one of `forbidden`, or spells one the way git's option parser would take
    it: a long option abbreviated (`--no-ver` for `--no-verify`, `--amen=`), or a short
    one inside a bundle (`-anm` holds `-n`)."""
    if word in forbidden:
        return True
    if word.startswith("--") and len(word) > 3:
        name = word.split("=", 1)[0]
        return any(f.startswith("--") and f.startswith(name) for f in forbidden)
    if len(word) > 2 and word[0] == "-" and word[1] != "-" and word[1:].isalpha():
        return any(len(f) == 2 and f[0] == "-" and f[1] != "-" and f[1] in word[1:] for f in forbidden)
    return False


def _shell_decision(
    command: str,
    config: Config,
    grants: SessionGrants | None,
    root: Path,
    turn: Collection[ToolGrant] = (),
    *,
    sandbox: SandboxView | None = None,
    cwd: Path | None = None,
) -> Decision:
    line = parse(command, cwd=str(root))
    rules = [r for r in config.rules if r.tool in ("bash", "*")]
    commands = line.commands
    if denial := _turn_denial(commands, turn):
        return denial
    for rule in rules:
        if rule.action != "deny":
            continue
        prefix = _words_of(rule.command)
        if prefix is None:
            continue
        hit = next((c for c in commands if _deny_covers(prefix, c)), None)
        if hit is not None or (rule.command is None and commands):
            shown = shlex.join(str(w) for w in (hit.words if hit else ()) if w is not None) or command[:80]
            return Decision("deny", f"a rule denies `{rule.command or rule.tool}` (`{shown}`)")
        if unseen := _unseen_program(line):
            return Decision("ask", f"{unseen} could be `{rule.command}`, which a rule denies")
    preset = preset_action(config.permissions, "bash")
    why_not = _why_not_allowed(line, root)  # realpaths each redirection target: once a step
    allowed = why_not is None and bool(commands)

    def covered(prefixes: list[tuple[str, ...]]) -> bool:
        return allowed and all(any(_covers(p, c) for p in prefixes) for c in commands)

    allows = [p for r in rules if r.action == "allow" and (p := _words_of(r.command)) is not None]
    session = [p for g in (grants or ()) if g.tool == "bash" and (p := _words_of(g.command)) is not None]
    for rule in rules:
        if rule.action == "ask":
            prefix = _words_of(rule.command)
            asked = prefix is not None and (not prefix or any(_prefix_covers(prefix, c.written) for c in commands))
            if asked and not covered(session):  # a session grant is the user's answer to an ask rule
                return Decision("ask", f"rule for `{rule.command or rule.tool}`")
    if covered(allows):
        return Decision("allow", "allowed by the rules")
    if covered(allows + session):
        return Decision("allow", "allowed for this session")
    granted = [(p, g.exact) for g in turn if g.tool == "bash" and g.action == "allow" and (p := _words_of(g.command))]
    if granted and allowed:
        prefixes = allows + session

        def by_grant(c: Command) -> bool:
            return any(tuple(c.written) == p if exact else _covers(p, c) for p, exact in granted)

        if all(any(_covers(p, c) for p in prefixes) or by_grant(c) for c in commands):
            return Decision("allow", "allowed by the command's allowed-tools")
    if preset == "ask" and config.permissions != "strict":
        if is_read_only(line) and not (sandbox is not None and not sandbox.runs and _runs_git(line)):
            return Decision("allow", "a read-only command")
        if sandbox is not None:
            unasked, note, protected = _in_sandbox(line, config, sandbox, root, cwd or root)
            if unasked:
                return Decision("allow", "it runs in the sandbox (sandbox.autoAllow)", sandbox="sandboxed")
            if protected and not why_not:
                why_not = note  # a protected path keeps its question: a hook's allow does not stand in
            reason = f"preset {config.permissions}" + (f" ({why_not})" if why_not else "")
            return Decision(preset, reason, sandbox=note)
    return Decision(preset, f"preset {config.permissions}" + (f" ({why_not})" if why_not else ""))


def _runs_git(line: ParsedLine) -> bool:
    """git reads only what it is told, but runs what the repository's config names (an
    fsmonitor on `status`, a diff driver, a pager): a workspace is hostile input, so outside
    a sandbox a git reader is asked about like any other command (docs/security.md)."""
    return any(c.program == "git" for c in line.commands)


def _in_sandbox(line: ParsedLine, config: Config, view: SandboxView, root: Path, cwd: Path) -> tuple[bool, str, bool]:
    """(the sandbox runs the line unasked, else why not, and whether that is a protected path)."""
    if not config.sandbox.auto_allow:
        return False, "", False  # the user's choice: the question needs no reason
    if not view.runs:
        return False, view.why_not or "no sandbox will run it", False
    written, _hidden = reach.writes(line)  # a write nobody can name before it runs: the sandbox holds it
    real_root = root.resolve()
    for w in written:
        if w.target in QUIET_TARGETS:
            continue
        if w.after_cd:  # relative to a folder the line moves to: only its name can be judged
            if name := protected_name(Path(w.target).parts):
                return False, f"it writes {w.target}, a protected path: {protected_why(name)}", True
            continue
        lexical = Path(os.path.normpath(cwd / os.path.expanduser(w.target)))
        real = Path(os.path.realpath(lexical))
        for path, top in ((real, real_root), (lexical, Path(os.path.abspath(root)))):
            if why := protected_reason_for(path, top):  # the workspace's names and the home's
                return False, f"it writes {w.target}, a protected path: {why}", True
        if real.is_relative_to(real_root):  # bound read-only over any /tmp it lies in
            held = view.mode == "workspace-write"
        else:
            held = any(real.is_relative_to(top) for top in view.writable)
        if not held:
            return False, f"it writes {w.target}, outside the folders the sandbox lets it write", False
    line_hosts = reach.hosts(line)
    if view.network == "none" and (needs := reach.network_needs(line)):
        return False, f"it needs the network (`{needs[0]}`) and the sandbox has none (sandbox.network)", False
    if view.network == "domains":
        for host in line_hosts:
            if not domain_allowed(host, view.allowed_domains, view.denied_domains):
                return False, f"it reaches {host}, a domain sandbox.network does not allow", False
    return True, "", False


def domain_allowed(host: str, allowed: Sequence[str], denied: Sequence[str]) -> bool:
    """`host` under `sandbox.network`'s domain rules: a denied one never, else an allowed
    one (`x.com` exactly, `*.x.com` its sub-domains)."""
    host = host.lower().rstrip(".")

    def match(pattern: str) -> bool:
        p = pattern.lower().rstrip(".")
        return host.endswith(p[1:]) if p.startswith("*.") else host == p

    return not any(match(d) for d in denied) and any(match(a) for a in allowed)


def _words_of(command: str | None) -> tuple[str, ...] | None:
    return () if command is None else rule_words(command)


def _why_not_allowed(line: ParsedLine, root: Path) -> str | None:
    if not line.parsed:
        return "the command could not be parsed"
    if line.unknown_scripts:
        return line.unknown_scripts[0]
    return _writes_outside(line, root)


def rule_names(tool: str) -> frozenset[str]:
    """The names a rule or grant may give `tool`: its own, and for an MCP server's tool
    `mcp__<server>__<tool>` also `mcp__<server>` (all of that server's tools)."""
    if tool.startswith("mcp__"):
        server = tool[len("mcp__") :].split("__", 1)[0]
        if server and tool != f"mcp__{server}":
            return frozenset({tool, f"mcp__{server}"})
    return frozenset({tool})


def preset_action(preset: str, tool: str) -> Action:
    if tool in ALWAYS_ALLOWED or preset == "yolo":
        return "allow"
    if tool in READ_TOOLS:
        return "allow"
    if tool in WRITE_TOOLS and preset == "auto-edit":
        return "allow"
    return "ask"


# --- input access -------------------------------------------------------------------------


class _ShellInput(Protocol):
    @property
    def command(self) -> str: ...


class _PathInput(Protocol):
    @property
    def path(self) -> str | None: ...


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _command_of(input: _ShellInput | Mapping[str, Any] | object) -> str | None:
    """A shell tool's command: its typed input's `command` (a dict's key from callers
    outside the pipeline)."""
    if isinstance(input, Mapping):
        return _text(input.get("command"))
    return _text(getattr(input, "command", None))


def _path_of(input: _PathInput | Mapping[str, Any] | object) -> str | None:
    """A file tool's path: its typed input's `path` (a dict's key from callers outside the
    pipeline)."""
    if isinstance(input, Mapping):
        return _text(input.get("path"))
    return _text(getattr(input, "path", None))


def _default_check(command: str, root: Path) -> str | None:
    from coder_ls.guard.safety import check_command

    result: str | None = check_command(command, root)
    return result


def _protected(real: Path, real_root: Path) -> bool:
    try:
        parts = real.relative_to(real_root).parts
    except ValueError:
        return False
    return protected_name(parts) is not None


def protected_reason(tool: str, input: Any, root: Path) -> str | None:
    """Why a file tool writing this path must be asked about (`guard/protected.py`)."""
    if tool not in WRITE_TOOLS:
        return None
    raw = _path_of(input)
    if not isinstance(raw, str) or not raw:
        return None
    lexical = Path(os.path.normpath(root / raw))
    real = Path(os.path.realpath(lexical))
    real_root = root.resolve()
    for path, top in ((real, real_root), (lexical, Path(os.path.abspath(root)))):
        if why := protected_reason_for(path, top):
            return why
    return None


def _rel_for(tool: str, input: Any, root: Path, config: Config) -> tuple[str | None, str | None]:
    """(relative path for rules, refusal reason) of a file tool's input."""
    if tool not in PATH_TOOLS:
        return None, None
    raw = _path_of(input)
    if not isinstance(raw, str) or not raw:
        raw = "."
    try:
        path = resolve_path(root, raw, allow_outside=config.allow_outside_workspace)
    except PathError as exc:
        return None, str(exc)
    return display_path(root, path), None


def _real_rel(root: Path, rel: str) -> str:
    real = Path(os.path.realpath(root / rel))
    return display_path(root.resolve(), real)


def decide(
    tool: str,
    input: Any,
    config: Config,
    session_grants: SessionGrants | None = None,
    *,
    root: Path,
    allowed_tools: Collection[str] | None = None,
    check_command: CommandCheck | None = None,
    turn_grants: Collection[ToolGrant] = (),
    skill_dirs: Sequence[Path] = (),
    sandbox: SandboxView | None = None,
    cwd: Path | None = None,
) -> Decision:
    """Whether `tool` may run with `input` (the tool's typed struct; the model's dict from
    callers outside the pipeline). `turn_grants`: what the command that started this turn
    allows (`allowed-tools`); `skill_dirs`: the user's and plugins' skill folders, which the
    read tools may read; `sandbox`: whether a sandbox will run a shell call and what it lets
    it reach (None: the caller does not say, and nothing runs unasked for the sandbox's
    sake); `cwd`: the shell's working directory, where a relative path in the line lands."""
    if allowed_tools is not None and tool not in allowed_tools:
        return Decision("deny", f"the tool {tool} is not available to this agent")
    if tool in READ_TOOLS and skill_dirs:
        raw = _path_of(input)
        if isinstance(raw, str) and skill_file(raw, list(skill_dirs)) is not None:
            return Decision("allow", "a file of an installed skill's folder (read only)")
    grants = session_grants if (session_grants is not None and config.permissions != "strict") else None
    planned: Decision | None = None
    if config.permissions == PLAN_PRESET:  # before the rules and grants: nothing opens a write
        command = _command_of(input)
        line = parse(command, cwd=str(root)) if tool in SHELL_TOOLS and isinstance(command, str) else None
        planned = plan_decision(tool, input, line, sandbox)
        if planned is not None and (planned.action == "deny" or tool not in SHELL_TOOLS):
            return planned

    if tool in WEB_TOOLS:  # its own rules, by domain (`agent/webpolicy.py`)
        from coder_ls.agent.webpolicy import web_decision

        return web_decision(tool, input, config, grants, turn_grants)
    if tool in SHELL_TOOLS:
        command = _command_of(input)
        if not isinstance(command, str) or not command.strip():
            return Decision("deny", "no command given")
        refusal = (check_command or _default_check)(command, root)
        if refusal:
            return Decision("deny", refusal)
        shell = _shell_decision(command, config, grants, root, turn_grants, sandbox=sandbox, cwd=cwd)
        return planned if planned is not None and shell.action == "allow" else shell

    rel, refusal = _rel_for(tool, input, root, config)
    if refusal:
        return Decision("deny", refusal)
    family = WRITE_TOOLS if tool in WRITE_TOOLS else rule_names(tool)
    paths = {rel, _real_rel(root, rel)} if rel is not None else set()
    real = _real_rel(root, rel) if rel is not None else None

    def matching(action: str, tools: Collection[str], among: Collection[str | None]) -> Rule | None:
        for r in config.rules:
            if r.action == action and r.tool in (*tools, "*") and r.command is None:
                if r.path is None or any(p is not None and glob_match(r.path, p) for p in among):
                    return r
        return None

    if rule := matching("deny", family, paths):
        return Decision("deny", f"rule for {rule.tool} {rule.path or ''}".rstrip())
    for g in turn_grants:  # a turn's deny grant (`coder-ls exec --deny 'Edit(src/**)'`): like a deny rule
        if (
            g.action == "deny"
            and g.tool in family
            and (g.path is None or any(p is not None and glob_match(g.path, p) for p in paths))
        ):
            return Decision("deny", f"this turn may not use {g.tool} {g.path or ''}".rstrip())
    if why := protected_reason(tool, input, root):
        return Decision("ask", f"a protected path: {why}")
    granted = grants is not None and real is not None and grants.covers_path(tool, real)
    if (rule := matching("ask", family, paths)) and not granted:
        return Decision("ask", f"rule for {rule.tool} {rule.path or ''}".rstrip())
    named = rule_names(tool)
    if (rule := matching("allow", named, [real] if real is not None else [])) and (
        rel is None or matching("allow", named, [rel])
    ):
        return Decision("allow", f"rule for {rule.tool} {rule.path or ''}".rstrip())
    if granted:
        return Decision("allow", "allowed for this session")
    for g in turn_grants:
        if g.tool == tool and g.action == "allow" and real is not None:
            if g.path is None or (glob_match(g.path, real) and rel is not None and glob_match(g.path, rel)):
                return Decision("allow", "allowed by the command's allowed-tools")
        if g.tool == tool and g.action == "allow" and real is None and tool in READ_TOOLS:
            return Decision("allow", "allowed by the command's allowed-tools")
        if g.tool in named and g.action == "allow" and tool.startswith("mcp__"):
            return Decision("allow", "allowed by the command's allowed-tools")
    return Decision(preset_action(config.permissions, tool), f"preset {config.permissions}")


# --- asking the user ----------------------------------------------------------------------


def approval_scope(tool: str, input: Any, root: Path, config: Config | None = None) -> list[Grant]:
    """What "Allow for session" / "Always allow" cover: command prefixes or a path glob.
    Empty for a shell line no rule could cover exactly (a here-document, a script given
    to an interpreter on its input, a word that is not a literal, a line that does not
    parse): the question then offers only "Allow once" and "Deny".

    A file inside a directory grants the directory (`src/**`); a file at the root
    grants that file only. A protected path (`.git/`, `.coder/`) grants nothing wider
    than itself, and is asked about again anyway.
    """
    if tool in SHELL_TOOLS:
        command = _command_of(input)
        if not isinstance(command, str):
            return [Grant(tool, command=str(command))]
        line = parse(command, cwd=str(root))
        if not line.parsed or line.unknown_scripts or not line.commands:
            return []  # no rule could cover it: nothing to remember
        seen: list[Grant] = []
        for cmd in line.commands:
            words = grant_words(cmd)
            if words is None:
                return []  # no rule names exactly what it runs: "Allow once" only
            grant = Grant(tool, command=shlex.join(words))
            if grant not in seen and grant.command:
                seen.append(grant)
        return seen
    if tool in WEB_TOOLS:
        from coder_ls.agent.webpolicy import web_scope

        return web_scope(tool, input)
    if tool in PATH_TOOLS:
        rel, refusal = _rel_for(tool, input, root, config or Config())
        if rel is None or refusal:
            return [Grant(tool, path="")]
        rel = _real_rel(root, rel)
        parent = rel.rpartition("/")[0]
        if protected_reason(tool, input, root):
            return [Grant(tool, path=rel)]
        return [Grant(tool, path=f"{parent}/**" if parent else rel)]
    return [Grant(tool)]


def describe_call(tool: str, input: Any, root: Path) -> str:
    """A one-line summary for the approval question: "run `npm test`", "edit src/app.py"."""
    command = _command_of(input)
    if tool in SHELL_TOOLS and isinstance(command, str):
        short = command if len(command) <= 200 else command[:200] + "…"
        later = " in the background (it keeps running)" if getattr(input, "background", False) else ""
        return f"run `{short}`{later}"
    if tool in WEB_TOOLS:
        from coder_ls.agent.webpolicy import describe_web

        return describe_web(tool, input)
    path = _path_of(input)
    if isinstance(path, str):
        verb = {"read": "read", "write": "write", "edit": "edit", "multiEdit": "edit"}.get(tool, tool)
        why = protected_reason(tool, input, root)
        return f"{verb} {path}" + (f" (a protected path: {why})" if why else "")
    return f"use {tool}"


async def approve(
    ctx: Asking,
    tool: str,
    input: Any,
    summary: str,
    persist_rule: Callable[[Rule], None],
    *,
    call_id: str | None = None,
    detail: str = "",
) -> ApprovalDecision:
    """Ask the user about one tool call (`Allow once`, `Allow for session`, `Always allow`,
    `Deny`). A dismissed question is a denial, and so is one left unanswered for
    `approvals.timeoutSeconds`; a cancelled task re-raises CancelledError. `detail` (an
    edit's unified diff) follows the question's first line."""
    cid = call_id if call_id is not None else ctx.call_id
    ctx.emit(ApprovalRequested(call_id=cid, tool=tool, summary=summary))
    message = f"{ctx.actor} wants to {summary} ({tool})." + (f"\n{detail}" if detail else "")
    scope = approval_scope(tool, input, ctx.root, ctx.config)
    choices = list(CHOICES) if scope else ["Allow once", "Deny"]
    if not scope:
        message += "\n(No rule can name exactly what this runs, so it can only be allowed once.)"
    timeout = ctx.config.approvals.timeout_seconds
    timed_out = False
    try:
        choice = await asyncio.wait_for(ctx.host.ask("info", message, choices), timeout)
    except TimeoutError:
        choice, timed_out = None, True
        ctx.host.show_message(
            "warning", f"Coder: the approval to {summary} was not answered within {timeout:g}s; the call was denied."
        )
    except asyncio.CancelledError:
        ctx.emit(ApprovalResolved(call_id=cid, decision="cancelled"))
        raise
    if choice not in choices:
        choice = None  # an answer that was not offered is no answer
    if choice == "Allow once":
        result = ApprovalDecision(True, "allowOnce")
    elif choice == "Allow for session":
        for grant in scope:
            ctx.grants.add(grant)
        result = ApprovalDecision(True, "allowSession")
    elif choice == "Always allow":
        for grant in scope:
            persist_rule(
                Rule(tool=grant.tool, action="allow", command=grant.command, path=grant.path, domain=grant.domain)
            )
            ctx.grants.add(grant)
        result = ApprovalDecision(True, "alwaysAllow")
    else:
        why = "denied it"
        if choice is None:
            why = f"did not answer within {timeout:g}s" if timed_out else "dismissed the question"
        result = ApprovalDecision(False, "deny", f"The user {why}: the {tool} call did not run. Do not retry it as is.")
    ctx.emit(ApprovalResolved(call_id=cid, decision=result.decision))
    return result
