"""Prompt commands and skills defined in markdown files (contract section 10).

- the user's: `~/.config/coder/commands/name.md`, `~/.claude/commands/name.md`, then the
  skills `~/.config/coder/skills/name/SKILL.md`, `~/.claude/skills/name/SKILL.md`;
- the workspace's: `<root>/.coder/commands/name.md`, `<root>/.claude/commands/name.md`, then
  `<root>/.coder/skills/name/SKILL.md`, `<root>/.claude/skills/name/SKILL.md`.

In this order, first match wins (`~/.config` is `$XDG_CONFIG_HOME` when set). The workspace's
files come with a clone: what they may do is the gate's (`engine/trust.py`, row `commands`):
they never replace a built-in or the user's own command, and until `/trust` their
`allowed-tools` grant nothing and their `` !`cmd` `` lines wait for the user's approval.
Optional front matter (`frontmatter.py`):

    ---
    description: Review the staged changes
    argument-hint: [focus]
    ---
    Review `git diff --cached`. Focus on $ARGUMENTS.

`/name args` becomes an agent turn with the body expanded (`expand.py`). A file that
cannot be used is skipped and reported as a `LoadProblem` (the caller warns once).
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Literal, NamedTuple

import msgspec

from coder_ls.engine.commands.allowed import parse_allowed_tools
from coder_ls.engine.commands.context import CommandContext
from coder_ls.engine.commands.expand import expand_arguments
from coder_ls.engine.commands.frontmatter import CommandMeta, FrontMatterError, parse
from coder_ls.engine.commands.registry import Command, Handler
from coder_ls.engine.config import UnreadableFile, read_regular_file
from coder_ls.engine.trust import Origin, acts_as_user, may_replace
from coder_ls.protocol.actions import CommandOutcome, RunPromptCommand, ToolGrant

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
MAX_COMMAND_FILE = 256 * 1024
SKILL_FILE = "SKILL.md"


class SourceDir(NamedTuple):
    path: Path
    source: Literal["workspace", "user"]
    skill: bool  # folders of `<name>/SKILL.md` (else `<name>.md` files)


class LoadProblem(NamedTuple):
    path: Path
    message: str
    skipped: bool = True  # else the file loaded, without what the message names

    def describe(self) -> str:
        if not self.skipped:
            return f"Command file {self.path}: {self.message}"
        return f"Command file {self.path} was skipped: {self.message}"


def source_dirs(root: Path, env: Mapping[str, str]) -> list[SourceDir]:
    home = Path(env.get("HOME", os.path.expanduser("~")))
    config = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    return [  # the user's before the workspace's: a clone never shadows the user's own
        SourceDir(config / "coder" / "commands", "user", False),
        SourceDir(home / ".claude" / "commands", "user", False),
        SourceDir(config / "coder" / "skills", "user", True),
        SourceDir(home / ".claude" / "skills", "user", True),
        SourceDir(root / ".coder" / "commands", "workspace", False),
        SourceDir(root / ".claude" / "commands", "workspace", False),
        SourceDir(root / ".coder" / "skills", "workspace", True),
        SourceDir(root / ".claude" / "skills", "workspace", True),
    ]


def _handler(
    name: str,
    meta: CommandMeta,
    body: str,
    skill_dir: Path | None,
    grants: tuple[ToolGrant, ...] = (),
    confirm: Path | None = None,
) -> Handler:
    async def run(ctx: CommandContext, args: str) -> CommandOutcome:
        if not meta.user_invocable:
            return CommandOutcome(
                error=f"/{name} is a skill for the agent only (user-invocable: false).",
                error_code="not_user_invocable",
            )
        expanded = expand_arguments(body, args.strip(), skill_dir, meta.arguments)
        fork = (meta.agent or "general") if meta.context == "fork" else None
        action = RunPromptCommand(
            prompt=expanded.text,
            commands=expanded.commands,
            model=meta.model or None,
            grants=grants,
            fork=fork,
            name=name,
            confirm_commands=str(confirm) if confirm is not None else None,
            effort=meta.effort or None,
        )
        return CommandOutcome(actions=[action])

    return run


def _candidates(d: SourceDir) -> list[tuple[str, Path]]:
    """(default name, file) of one source folder, sorted."""
    try:
        entries = sorted(os.scandir(d.path), key=lambda e: e.name)
    except OSError:
        return []
    if d.skill:
        skills = [(e.name, Path(e.path) / SKILL_FILE) for e in entries if e.is_dir()]
        return [(name, path) for name, path in skills if os.path.lexists(path)]
    return [(e.name[:-3], Path(e.path)) for e in entries if e.name.endswith(".md")]


def _read(path: Path) -> str:
    try:
        data = read_regular_file(path, MAX_COMMAND_FILE)
    except UnreadableFile as exc:
        raise FrontMatterError(str(exc)) from None
    except OSError as exc:
        raise FrontMatterError(f"cannot read: {exc.strerror}") from None
    return (data or b"").decode("utf-8", errors="replace")


def load_commands(
    dirs: list[SourceDir], local: Collection[str], builtin: Collection[str] = (), *, trusted: bool = False
) -> tuple[list[Command], list[LoadProblem]]:
    """The file-defined commands (first match wins) and the files that were skipped.
    `local`: the built-in local commands, which no file can take; `builtin`: every built-in
    command, which a workspace file cannot take either; `trusted`: the user ran `/trust`."""
    found: dict[str, Command] = {}
    problems: list[LoadProblem] = []
    users: set[str] = set()
    for d in dirs:
        origin: Origin = d.source
        reserved = frozenset(local) if origin == "user" else frozenset(builtin) | frozenset(local)
        for default_name, path in _candidates(d):
            try:
                meta, body = parse(_read(path))
            except FrontMatterError as exc:
                problems.append(LoadProblem(path, str(exc)))
                continue
            name = (meta.name if d.skill and meta.name else default_name).strip()
            if not _NAME.match(name):
                problems.append(LoadProblem(path, f"{name!r} is not a valid command name"))
                continue
            refused = may_replace(origin, name, reserved, frozenset(users))
            if refused is not None:
                problems.append(LoadProblem(path, refused))
                continue
            if name in found or not body:
                continue
            if origin == "user":
                users.add(name)
            skill_dir = path.parent if d.skill else None
            grants: tuple[ToolGrant, ...] = ()
            as_user = acts_as_user(origin, trusted)
            if as_user:
                grants, grant_problems = parse_allowed_tools(meta.allowed_tools)
                problems += [LoadProblem(path, p, skipped=False) for p in grant_problems]
            else:
                if meta.allowed_tools:
                    message = "allowed-tools grant nothing until you trust this workspace with /trust"
                    problems.append(LoadProblem(path, message, skipped=False))
                if meta.model:  # the repo does not choose what the user pays for
                    message = f"model {meta.model!r} is ignored until you trust this workspace with /trust"
                    problems.append(LoadProblem(path, message, skipped=False))
                    meta = msgspec.structs.replace(meta, model="")
            found[name] = Command(
                name=name,
                description=meta.description or body.splitlines()[0][:80],
                argument_hint=meta.argument_hint,
                handler=_handler(name, meta, body, skill_dir, grants, confirm=None if as_user else path),
                kind="agent" if meta.context == "fork" else "prompt",
                source="skill" if d.skill else d.source,
                path=path,
                meta=meta,
                body=body,
                skill_dir=skill_dir,
                origin=origin,
            )
    return list(found.values()), problems


def signature(dirs: list[SourceDir]) -> tuple[tuple[str, int, int], ...]:
    """Cheap fingerprint of the command and skill files (path, size, mtime) to notice changes."""
    out: list[tuple[str, int, int]] = []
    for d in dirs:
        try:
            entries = list(os.scandir(d.path))
        except OSError:
            continue
        for entry in entries:
            if d.skill:
                target = os.path.join(entry.path, SKILL_FILE)
            elif entry.name.endswith(".md"):
                target = entry.path
            else:
                continue
            try:
                st = os.stat(target)
            except OSError:
                continue
            out.append((target, st.st_size, st.st_mtime_ns))
    return tuple(sorted(out))
