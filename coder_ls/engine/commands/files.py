"""Prompt commands defined in markdown files.

`<root>/.coder/commands/<name>.md` (source `workspace`) and
`$XDG_CONFIG_HOME/coder/commands/<name>.md` (source `user`). Optional front matter:

    ---
    description: Review the staged changes
    argument-hint: [focus]
    ---
    Review `git diff --cached`. Focus on $ARGUMENTS.

`/name args` becomes an agent turn with the body, `$ARGUMENTS` replaced by `args`
(appended on a line of its own when the body does not mention it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from coder_ls.engine.commands.context import CommandContext
from coder_ls.engine.commands.registry import Command, Handler, Source
from coder_ls.protocol.actions import CommandOutcome, RunAgent

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")


def command_dirs(root: Path, env: Mapping[str, str]) -> list[tuple[Path, Source]]:
    base = env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME", os.path.expanduser("~")), ".config")
    return [(root / ".coder" / "commands", "workspace"), (Path(base) / "coder" / "commands", "user")]


def parse_command_file(text: str) -> tuple[dict[str, str], str]:
    meta: dict[str, str] = {}
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            for line in text[4:end].splitlines():
                key, sep, value = line.partition(":")
                if sep:
                    meta[key.strip().lower()] = value.strip().strip("\"'")
            text = text[end + 4 :].lstrip("\n")
    return meta, text.strip()


def expand(body: str, args: str) -> str:
    if "$ARGUMENTS" in body:
        return body.replace("$ARGUMENTS", args)
    return f"{body}\n\n{args}" if args else body


def _handler(body: str) -> Handler:
    async def run(ctx: CommandContext, args: str) -> CommandOutcome:
        return CommandOutcome(actions=[RunAgent(prompt=expand(body, args.strip()))])

    return run


def load_prompt_commands(dirs: list[tuple[Path, Source]]) -> list[Command]:
    """Workspace commands win over user commands of the same name."""
    found: dict[str, Command] = {}
    for directory, source in dirs:
        try:
            files = sorted(directory.glob("*.md"))
        except OSError:
            continue
        for path in files:
            name = path.stem
            if not _NAME.match(name) or name in found:
                continue
            try:
                meta, body = parse_command_file(path.read_text(encoding="utf-8", errors="replace"))
            except OSError:
                continue
            if not body:
                continue
            description = meta.get("description") or body.splitlines()[0][:80]
            found[name] = Command(
                name=name,
                description=description,
                argument_hint=meta.get("argument-hint", ""),
                handler=_handler(body),
                kind="prompt",
                source=source,
                path=path,
            )
    return list(found.values())


def signature(dirs: list[tuple[Path, Source]]) -> tuple[tuple[str, int, int], ...]:
    """Cheap fingerprint of the command files (name, size, mtime) to notice changes."""
    out: list[tuple[str, int, int]] = []
    for directory, _ in dirs:
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            if entry.name.endswith(".md"):
                try:
                    st = entry.stat()
                except OSError:
                    continue
                out.append((entry.path, st.st_size, st.st_mtime_ns))
    return tuple(sorted(out))
