"""Subagent definitions (contract section 13): `<name>.md` in `~/.config/coder/agents/`,
`~/.claude/agents/`, `<root>/.coder/agents/`, `<root>/.claude/agents/` (first wins: the
user's before the workspace's), with front matter `name`, `description`, `tools` (a list or
one comma-separated string; default all) and `model` (default the session's); the body is
its system prompt. Built in: `general` (all tools) and `explore` (read-only). What a
workspace's file may do is the gate's (`engine/trust.py`, row `agents`): it never replaces a
built-in agent or the user's own, and until `/trust` its `model:` is ignored. A file that
cannot be used is skipped and reported (the caller warns once, like command files).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from coder_ls.engine.agent_api import AgentDef
from coder_ls.engine.commands.allowed import TOOL_NAMES
from coder_ls.engine.commands.files import MAX_COMMAND_FILE, LoadProblem
from coder_ls.engine.commands.frontmatter import FrontMatterError, parse
from coder_ls.engine.config import UnreadableFile, read_regular_file
from coder_ls.engine.trust import Origin, acts_as_user, may_replace

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
    config = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    return [
        (config / "coder" / "agents", "user"),
        (home / ".claude" / "agents", "user"),
        (root / ".coder" / "agents", "workspace"),
        (root / ".claude" / "agents", "workspace"),
    ]


BUILTIN_NAMES = frozenset(a.name for a in BUILTIN_AGENTS)


def load_agents(dirs: list[tuple[Path, Origin]], *, trusted: bool = False) -> tuple[list[AgentDef], list[LoadProblem]]:
    """The defined agents (first match wins), then the built-in ones whose names no file
    took (the user's own `explore.md` is their explore; a workspace's is ignored), and the
    files skipped. `trusted`: the user ran `/trust` in this workspace."""
    found: dict[str, AgentDef] = {}
    problems: list[LoadProblem] = []
    users: set[str] = set()
    for folder, source in dirs:
        try:
            entries = sorted((e for e in os.scandir(folder) if e.name.endswith(".md")), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            path = Path(entry.path)
            try:
                data = read_regular_file(path, MAX_COMMAND_FILE)
                meta, body = parse((data or b"").decode("utf-8", errors="replace"))
            except (UnreadableFile, OSError, FrontMatterError) as exc:
                problems.append(LoadProblem(path, str(exc)))
                continue
            name = (meta.name or path.stem).strip()
            if not _NAME.match(name):
                problems.append(LoadProblem(path, f"{name!r} is not a valid agent name"))
                continue
            reserved = BUILTIN_NAMES if source == "workspace" else frozenset()
            refused = may_replace(source, name, reserved, frozenset(users), "agent")
            if refused is not None:
                problems.append(LoadProblem(path, refused))
                continue
            if name in found:
                continue
            if source == "user":
                users.add(name)
            model = meta.model or None
            if model and not acts_as_user(source, trusted):  # the repo does not choose what the user pays for
                message = f"model {model!r} is ignored until you trust this workspace with /trust"
                problems.append(LoadProblem(path, message, skipped=False))
                model = None
            tools: tuple[str, ...] | None = None
            if meta.tools:
                unknown = [t for t in meta.tools if t.lower() not in _TOOL_NAMES]
                if unknown:
                    problems.append(LoadProblem(path, f"unknown tools {', '.join(unknown)} (left out)", skipped=False))
                tools = tuple(_TOOL_NAMES[t.lower()] for t in meta.tools if t.lower() in _TOOL_NAMES)
            description = meta.description or (body.splitlines()[0][:80] if body else name)
            hooks = meta.hooks
            if hooks and not acts_as_user(source, trusted):
                message = "its hooks run only after you trust this workspace with /trust"
                problems.append(LoadProblem(path, message, skipped=False))
                hooks = {}
            found[name] = AgentDef(name, description, tools, model, body, source, hooks)
    for builtin in BUILTIN_AGENTS:
        found.setdefault(builtin.name, builtin)
    return list(found.values()), problems
