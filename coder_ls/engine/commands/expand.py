"""Expansion of a command or skill body (contract section 10), in this order:

1. `$ARGUMENTS` becomes the argument text (appended on its own line when absent);
2. `$1`…`$9` become the arguments split like a shell would (`shlex`; on a quoting
   error, split on whitespace);
   then `$name` becomes the argument at that name's place in the front matter's
   `arguments: [file, focus]` (`$file` is `$1`, `$focus` `$2`);
3. `${CODER_SKILL_DIR}` and `${CLAUDE_SKILL_DIR}` become the skill's folder;
4. each `` !`cmd` `` is run in the session's shell (see `run_inline`) and its output
   takes its place.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import NamedTuple

_PLACEHOLDER = re.compile(r"\$ARGUMENTS|\$([1-9])(?![0-9])|\$\{(?:CODER|CLAUDE)_SKILL_DIR\}")
INLINE = re.compile(r"!`([^`\n]+)`")
INLINE_MAX_BYTES = 20_000
# Where the output of the body's n-th inline command goes. The inline commands are found
# in the body itself, before any argument is put in: `` !`cmd` `` typed in the arguments
# is the user's text, never a command to run (a body's `` !`git log $1` `` still gets $1).
_SLOT = "\ue001"
_SLOT_RE = re.compile(_SLOT + r"(\d+)" + _SLOT)


class Expanded(NamedTuple):
    text: str  # with a slot where each inline command's output goes
    commands: tuple[str, ...]


def split_arguments(args: str) -> list[str]:
    try:
        return shlex.split(args)
    except ValueError:
        return args.split()


def _placeholders(names: tuple[str, ...]) -> re.Pattern[str]:
    if not names:
        return _PLACEHOLDER
    longest_first = sorted(names, key=len, reverse=True)
    named = "|".join(re.escape(n) for n in longest_first)
    return re.compile(_PLACEHOLDER.pattern + r"|\$(" + named + r")(?![A-Za-z0-9_])")


def expand_arguments(body: str, args: str, skill_dir: Path | None = None, names: tuple[str, ...] = ()) -> Expanded:
    """Steps 1-3, in one pass (a substituted text is never expanded again)."""
    args = args.replace(_SLOT, "")
    words = split_arguments(args)
    pattern = _placeholders(names)
    used_named: list[bool] = []

    def value(m: re.Match[str]) -> str:
        token = m.group(0)
        if token == "$ARGUMENTS":
            return args
        if m.group(1):
            n = int(m.group(1))
            return words[n - 1] if n <= len(words) else ""
        if names and m.group(2):
            used_named.append(True)
            n = names.index(m.group(2))
            return words[n] if n < len(words) else ""
        return str(skill_dir) if skill_dir is not None else token

    parts: list[str] = []
    commands: list[str] = []
    pos = 0
    for m in INLINE.finditer(body):
        parts.append(pattern.sub(value, body[pos : m.start()]))
        commands.append(pattern.sub(value, m.group(1)).strip())
        parts.append(f"{_SLOT}{len(commands) - 1}{_SLOT}")
        pos = m.end()
    parts.append(pattern.sub(value, body[pos:]))
    text = "".join(parts)
    if "$ARGUMENTS" not in body and args and not used_named:  # named arguments place them
        text = f"{text}\n\n{args}"
    return Expanded(text, tuple(commands))


class InlineRefused(Exception):
    """An inline command was refused: the whole command fails."""


async def run_inline(
    expanded: Expanded, check: Callable[[str], str | None], run: Callable[[str], Awaitable[str]]
) -> str:
    """Step 4: each inline command's output in its slot. Every command is checked first,
    so a refused one fails the whole expansion before anything ran."""
    for command in expanded.commands:
        reason = check(command)
        if reason is not None:
            raise InlineRefused(f"{command!r}: {reason}")
    outputs = [(await run(command)).rstrip("\n") for command in expanded.commands]
    return _SLOT_RE.sub(lambda m: outputs[int(m.group(1))], expanded.text)
