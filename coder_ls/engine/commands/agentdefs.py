"""Subagent definitions (contract section 13): `<name>.md` in `<root>/.coder/agents/`,
`<root>/.claude/agents/`, `~/.config/coder/agents/`, `~/.claude/agents/` (first wins),
with front matter `name`, `description`, `tools` (a list or one comma-separated string;
default all) and `model` (default the session's); the body is its system prompt. Built in:
`general` (all tools) and `explore` (read-only). A file that cannot be used is skipped
and reported (the caller warns once, like command files).
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


def agent_dirs(root: Path, env: Mapping[str, str]) -> list[tuple[Path, str]]:
    home = Path(env.get("HOME", os.path.expanduser("~")))
    config = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    return [
        (root / ".coder" / "agents", "workspace"),
        (root / ".claude" / "agents", "workspace"),
        (config / "coder" / "agents", "user"),
        (home / ".claude" / "agents", "user"),
    ]


def load_agents(dirs: list[tuple[Path, str]]) -> tuple[list[AgentDef], list[LoadProblem]]:
    """The defined agents (first match wins), then the built-in ones whose names no file
    took (a project's `explore.md` is the project's explore), and the files skipped."""
    found: dict[str, AgentDef] = {}
    problems: list[LoadProblem] = []
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
            if name in found:
                continue
            tools: tuple[str, ...] | None = None
            if meta.tools:
                unknown = [t for t in meta.tools if t.lower() not in _TOOL_NAMES]
                if unknown:
                    problems.append(LoadProblem(path, f"unknown tools {', '.join(unknown)} (left out)", skipped=False))
                tools = tuple(_TOOL_NAMES[t.lower()] for t in meta.tools if t.lower() in _TOOL_NAMES)
            description = meta.description or (body.splitlines()[0][:80] if body else name)
            found[name] = AgentDef(name, description, tools, meta.model or None, body, source)
    for builtin in BUILTIN_AGENTS:
        found.setdefault(builtin.name, builtin)
    return list(found.values()), problems
