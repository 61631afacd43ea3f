"""Expansion of a command or skill body (contract section 10), Claude Code's rules:

1. `$ARGUMENTS` becomes the argument text (appended on its own line when the body has
   no `$ARGUMENTS` and arguments were given); `$ARGUMENTS[N]` the N-th argument
   counting from 0, `$1`…`$99` the N-th counting from 1 (the contract's, and Claude
   Code's command files'), split like a shell would (`shlex`; on a quoting error, split
   on whitespace). A positional with no argument stays as written (as in Claude Code):
   `awk '{print $1}'`, `$B$6`, `$5.00` and `local file="$1"` in a body survive. When the
   model loads a skill with no arguments (`args is None`), no argument placeholder is
   touched at all. Then `$name` becomes the argument at that name's place in the front
   matter's `arguments: [file, focus]` (`$file` is `$1`, `$focus` `$2`); when named
   arguments placed the text, it is not appended again.
2. `${CLAUDE_SKILL_DIR}` (and `${CODER_SKILL_DIR}`), `${CLAUDE_PLUGIN_ROOT}`,
   `${CLAUDE_SESSION_ID}` and `${CLAUDE_PROJECT_DIR}` become the skill's folder, the
   plugin's folder, the session id and the workspace root (left as written when the
   command has none). `allowed-tools` entries get these too (`ExpandVars.apply`).
3. each `` !`cmd` `` at the start of a line or after whitespace, and each fenced block
   opened with ```` ```! ````, is run in the session's shell (see `run_inline`) and its
   output takes its place; `` `feat(api)!` `` or `` a!`b` `` in prose is text.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import NamedTuple

_ARGS = re.compile(r"\$ARGUMENTS\[(\d+)\]|\$ARGUMENTS\b|\$([1-9][0-9]?)(?![\w])")
_VARS = re.compile(r"\$\{(CLAUDE_SKILL_DIR|CODER_SKILL_DIR|CLAUDE_PLUGIN_ROOT|CLAUDE_SESSION_ID|CLAUDE_PROJECT_DIR)\}")
# `` !`cmd` `` after whitespace or at the start, or a ```! fenced block (its lines, one script).
INLINE = re.compile(r"(?<![^\s])!`([^`\n]+)`|^```!\s*\n(.*?)\n```[ \t]*$", re.MULTILINE | re.DOTALL)
INLINE_MAX_BYTES = 20_000
# Where the output of the body's n-th inline command goes. The inline commands are found
# in the body itself, before any argument is put in: `` !`cmd` `` typed in the arguments
# is the user's text, never a command to run (a body's `` !`git log $1` `` still gets $1).
_SLOT = "\ue001"
_SLOT_RE = re.compile(_SLOT + r"(\d+)" + _SLOT)


class ExpandVars(NamedTuple):
    skill_dir: Path | None = None
    plugin_root: Path | None = None
    session_id: str = ""
    project_dir: Path | None = None

    def value(self, name: str) -> str | None:
        match name:
            case "CLAUDE_SKILL_DIR" | "CODER_SKILL_DIR":
                return str(self.skill_dir) if self.skill_dir is not None else None
            case "CLAUDE_PLUGIN_ROOT":
                return str(self.plugin_root) if self.plugin_root is not None else None
            case "CLAUDE_SESSION_ID":
                return self.session_id or None
            case "CLAUDE_PROJECT_DIR":
                return str(self.project_dir) if self.project_dir is not None else None
        return None

    def apply(self, text: str) -> str:
        """`${CLAUDE_…}` variables put in (an `allowed-tools` entry, a body)."""
        return _VARS.sub(lambda m: self.value(m.group(1)) or m.group(0), text)


class Expanded(NamedTuple):
    text: str  # with a slot where each inline command's output goes
    commands: tuple[str, ...]


def split_arguments(args: str) -> list[str]:
    try:
        return shlex.split(args)
    except ValueError:
        return args.split()


def inline_command(m: re.Match[str]) -> str:
    return (m.group(1) if m.group(1) is not None else m.group(2)).strip()


def _placeholders(names: tuple[str, ...]) -> re.Pattern[str]:
    """The argument placeholders, with the front matter's named ones (longest name first)."""
    if not names:
        return _ARGS
    named = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(_ARGS.pattern + r"|\$(" + named + r")(?![A-Za-z0-9_])")


def expand_arguments(
    body: str, args: str | None, variables: ExpandVars | None = None, names: tuple[str, ...] = ()
) -> Expanded:
    """Steps 1-2, in one pass (a substituted text is never expanded again); `args` None:
    loaded by the model without arguments (placeholders untouched); `names`: the front
    matter's `arguments:`."""
    variables = variables if variables is not None else ExpandVars()
    text_args = (args or "").replace(_SLOT, "")
    words = split_arguments(text_args)
    pattern = _placeholders(names)
    used_named: list[bool] = []

    def value(m: re.Match[str]) -> str:
        if args is None:
            return m.group(0)
        if m.group(1) is not None:
            n = int(m.group(1))
            return words[n] if n < len(words) else m.group(0)
        if m.group(2) is not None:
            n = int(m.group(2))
            return words[n - 1] if n <= len(words) else m.group(0)
        if names and m.lastindex == 3 and m.group(3):
            used_named.append(True)
            n = names.index(m.group(3))
            return words[n] if n < len(words) else ""
        return text_args

    def expand(text: str) -> str:
        return variables.apply(pattern.sub(value, text))

    parts: list[str] = []
    commands: list[str] = []
    pos = 0
    for m in INLINE.finditer(body):
        parts.append(expand(body[pos : m.start()]))
        commands.append(expand(inline_command(m)))
        parts.append(f"{_SLOT}{len(commands) - 1}{_SLOT}")
        pos = m.end()
    parts.append(expand(body[pos:]))
    text = "".join(parts)
    if "$ARGUMENTS" not in body and text_args and not used_named:  # named arguments placed them
        text = f"{text}\n\n{text_args}"
    return Expanded(text, tuple(commands))


class InlineRefused(Exception):
    """An inline command was refused: the whole command fails."""


async def run_inline(
    expanded: Expanded, check: Callable[[str], str | None], run: Callable[[str], Awaitable[str]]
) -> str:
    """Step 3: each inline command's output in its slot. Every command is checked first,
    so a refused one fails the whole expansion before anything ran."""
    for command in expanded.commands:
        reason = check(command)
        if reason is not None:
            raise InlineRefused(f"{command!r}: {reason}")
    outputs = [(await run(command)).rstrip("\n") for command in expanded.commands]
    return _SLOT_RE.sub(lambda m: outputs[int(m.group(1))], expanded.text)
