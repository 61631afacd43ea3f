"""Subagent definitions (contract section 13): `<name>.md` (in sub-folders too) in
`~/.config/coder/agents/`, `~/.claude/agents/`, the enabled plugins' `agents/`,
`<root>/.coder/agents/`, `<root>/.claude/agents/` (first wins: the user's before the
workspace's), with front matter `name`, `description`, `tools` (a list or one comma- or
space-separated string; default all) and `model` (default the session's; `sonnet`, `opus`,
`haiku` are resolved by the model catalog, `inherit` is the parent's model); the body is
its system prompt. Claude Code's other keys: `maxTurns` caps the agent's model requests;
`isolation: worktree` runs it in a git worktree of its own (`agent/isolated.py`);
`permissionMode: plan` narrows it to the read-only tools, and a mode that would widen what
runs unasked is ignored with a warning (so are `color` and `hooks`). An agent whose listed
tools all do not exist here is not loaded (it would run with none). `README.md`-like files
with no front matter are documentation, not agents. Built in: `general` (all tools) and `explore` (read-only). What a
workspace's file may do is the gate's (`guard/trust.py`, row `agents`): it never replaces a
built-in agent or the user's own, and until `/trust` its `model:` is ignored. A file that
cannot be used is skipped and reported (the caller warns once, like command files).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

import msgspec

from coder_ls.commands.allowed import TOOL_NAMES
from coder_ls.commands.files import LoadProblem, SourceDir, is_documentation, read_text, walk_markdown
from coder_ls.commands.frontmatter import CommandMeta, FrontMatterError, parse_lenient
from coder_ls.guard.trust import Origin, acts_as_user, may_replace
from coder_ls.protocol.agents import AgentDef
from coder_ls.userdirs import config_dir

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
# Claude Code's names for our tools, as agent files from `.claude/agents/` use them (an
# agent may also have the `task` and `skill` tools, which `allowed-tools` never grants).
_TOOL_NAMES = {**TOOL_NAMES, "task": "task", "skill": "skill"}

BUILTIN_AGENTS = (
    AgentDef(
        name="general",
        description="A general-purpose agent with every tool, for a self-contained task",
        tools=None,
        model=None,
        prompt="",
        source="builtin",
    ),
    AgentDef(
        name="explore",
        description="Finds and reads code to answer a question; changes nothing (read, grep, glob, ls)",
        tools=("read", "grep", "glob", "ls"),
        model=None,
        prompt="You explore the codebase to answer the question you are given. You cannot change files. "
        "Answer with what you found and where (paths and line numbers).",
        source="builtin",
    ),
)


def agent_dirs(root: Path, env: Mapping[str, str]) -> list[tuple[Path, Origin]]:
    home = Path(env.get("HOME", os.path.expanduser("~")))
    return [
        (config_dir(env) / "agents", "user"),
        (home / ".claude" / "agents", "user"),
        (root / ".coder" / "agents", "workspace"),
        (root / ".claude" / "agents", "workspace"),
    ]


BUILTIN_NAMES = frozenset(a.name for a in BUILTIN_AGENTS)


_READ_ONLY = ("read", "grep", "glob", "ls")
# Claude Code's permission modes: `plan` (read-only) is honoured by narrowing the tools;
# the others would widen what runs unasked, which a file never does here (said once).
_NARROWS = {"plan": _READ_ONLY}
_MODEL_INHERIT = "inherit"


def _definition(
    path: Path, meta: CommandMeta, body: str, source: Origin, trusted: bool, problems: list[LoadProblem]
) -> AgentDef | None:
    """One agent file's definition (problems noted), or None when it cannot run."""
    name = (meta.name or path.stem).strip()
    if not _NAME.match(name):
        problems.append(LoadProblem(path, f"{name!r} is not a valid agent name"))
        return None
    model = meta.model or None
    if model == _MODEL_INHERIT:  # Claude Code's word for "the parent's model"
        model = None
    if model and not acts_as_user(source, trusted):  # the repo does not choose what the user pays for
        message = f"model {model!r} is ignored until you trust this workspace with /trust"
        problems.append(LoadProblem(path, message, skipped=False))
        model = None
    tools: tuple[str, ...] | None = None
    if meta.tools:
        unknown = [t for t in meta.tools if t.lower() not in _TOOL_NAMES]
        if unknown:
            problems.append(LoadProblem(path, f"unknown tools {', '.join(unknown)} (left out)", skipped=False))
        tools = tuple(dict.fromkeys(_TOOL_NAMES[t.lower()] for t in meta.tools if t.lower() in _TOOL_NAMES))
        if not tools:  # running it with no tools at all is not what its author meant
            problems.append(LoadProblem(path, "none of its tools exist here, and an agent without tools cannot work"))
            return None
    mode = meta.permission_mode.strip()
    if mode in _NARROWS:
        tools = tuple(t for t in (tools if tools is not None else _NARROWS[mode]) if t in _NARROWS[mode])
    elif mode and mode != "default":
        message = f"permissionMode {mode!r} is ignored: an agent file never widens what runs unasked"
        problems.append(LoadProblem(path, message, skipped=False))
    isolation = meta.isolation.strip() or None
    if isolation not in (None, "worktree"):
        message = f"isolation {isolation!r} is ignored: only 'worktree' is known"
        problems.append(LoadProblem(path, message, skipped=False))
        isolation = None
    if meta.color:
        problems.append(LoadProblem(path, "color ignored (not supported here)", skipped=False))
    hooks = meta.hooks
    if hooks and not acts_as_user(source, trusted):
        message = "its hooks run only after you trust this workspace with /trust"
        problems.append(LoadProblem(path, message, skipped=False))
        hooks = {}
    description = meta.description or (body.split("\n", 1)[0][:80] if body else name)
    return AgentDef(
        name, description, tools, model, body, source, hooks=hooks, max_turns=meta.max_turns, isolation=isolation
    )


def load_agents(
    dirs: list[tuple[Path, Origin]], *, trusted: bool = False, plugins: list[SourceDir] | None = None
) -> tuple[list[AgentDef], list[LoadProblem]]:
    """The defined agents (first match wins; sub-folders scanned, as Claude Code does), then
    the built-in ones whose names no file took (the user's own `explore.md` is their
    explore; a workspace's is ignored), and the files skipped. `trusted`: the user ran
    `/trust` in this workspace. `plugins`: the enabled plugins' `agents/` folders, whose
    agents are named `plugin:name`."""
    found: dict[str, AgentDef] = {}
    problems: list[LoadProblem] = []
    users: set[str] = set()
    folders: list[tuple[Path, Origin, str]] = [(f, o, "") for f, o in dirs]
    folders[2:2] = [(p.path, "user", p.plugin) for p in plugins or []]  # after the user's, before the workspace's
    for folder, source, plugin in folders:
        for _, path in walk_markdown(folder):
            try:
                text = read_text(path)
            except FrontMatterError as exc:
                problems.append(LoadProblem(path, str(exc)))
                continue
            try:
                meta, body, meta_problems = parse_lenient(text)
            except FrontMatterError as exc:
                problems.append(LoadProblem(path, str(exc)))
                continue
            if is_documentation(path, text.lstrip("\ufeff").startswith("---")):
                continue
            problems += [LoadProblem(path, p, skipped=False) for p in meta_problems]
            definition = _definition(path, meta, body, source, trusted, problems)
            if definition is None:
                continue
            if plugin:
                definition = msgspec.structs.replace(definition, name=f"{plugin}:{definition.name}", source="plugin")
            name = definition.name
            reserved = BUILTIN_NAMES if source == "workspace" else frozenset()
            refused = may_replace(source, name, reserved, frozenset(users), "agent")
            if refused is not None:
                problems.append(LoadProblem(path, refused))
                continue
            if name in found:
                problems.append(LoadProblem(path, f"agent {name!r} is already defined by an earlier file"))
                continue
            if source == "user":
                users.add(name)
            found[name] = definition
    for builtin in BUILTIN_AGENTS:
        found.setdefault(builtin.name, builtin)
    return list(found.values()), problems
