"""Where hooks come from, in Claude Code's format, and which of them may run.

The format (Claude Code's settings files): `{"hooks": {EventName: [{"matcher": "Bash",
"hooks": [{"type": "command", "command": "...", "timeout": 60}]}]}}`, plus our
`failClosed: true` per command (a guard whose failure blocks instead of letting the call
through). Sources, each read on its own (every matching hook of every source runs; none
replaces another's):

- the user's: `~/.claude/settings.json`, and `hooks` in the user's coder config file;
- the workspace's: `.claude/settings.json`, `.claude/settings.local.json`, and `hooks` in
  `.coder/config.json`: code from the repository, so only once the folder is trusted
  (`guard/trust.py`, row `hooks`), and only files that really are inside the workspace
  (a symlink leading out of it is refused);
- a plugin's `hooks/hooks.json` (`plugin_hooks(root)`, `${CLAUDE_PLUGIN_ROOT}` expanded);
- a skill's or agent's `hooks:` front matter (`front_matter_hooks`), active only while it runs.

A malformed part is dropped with a problem naming its file; the rest of the file stays.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, cast

import msgspec

from coder_ls.hooks.records import EVENT_NAMES
from coder_ls.protocol.config import HookEventName, HookGroup
from coder_ls.saferead import UnreadableFile, read_regular_file

Origin = Literal["user", "workspace", "plugin", "skill", "agent"]
DEFAULT_TIMEOUT = 60.0  # seconds, as Claude Code
MAX_SETTINGS_BYTES = 1024 * 1024


class HookSpec(msgspec.Struct, frozen=True):
    """One runnable hook: its event, matcher, command and where it came from."""

    event: str
    matcher: str
    command: str
    timeout: float
    fail_closed: bool
    source: str  # the file (or skill / agent) it came from, shown to the user
    origin: Origin
    plugin_root: str = ""

    @property
    def name(self) -> str:
        first = self.command.strip().splitlines()[0] if self.command.strip() else self.command
        return first if len(first) <= 80 else first[:77] + "..."


class HookProblem(msgspec.Struct, frozen=True):
    source: str
    message: str

    def describe(self) -> str:
        return f"coder: hooks in {self.source}: {self.message}"


def parse_hooks(
    value: Any, source: str, origin: Origin, problems: list[HookProblem], plugin_root: str = ""
) -> list[HookSpec]:
    """The hooks of one `hooks` object; each bad event, group or command dropped alone."""
    if value is None:
        return []
    if not isinstance(value, Mapping):
        problems.append(HookProblem(source, "`hooks` must be an object of event names"))
        return []
    out: list[HookSpec] = []
    for event, groups in value.items():
        if event not in EVENT_NAMES:
            problems.append(HookProblem(source, f"unknown hook event {event!r} (known: {', '.join(EVENT_NAMES)})"))
            continue
        if not isinstance(groups, list):
            problems.append(HookProblem(source, f"{event}: must be a list of matcher groups"))
            continue
        for n, raw in enumerate(groups):
            if isinstance(raw, Mapping) and isinstance(raw.get("hooks"), list):
                commands = [c for c in raw["hooks"] if not (isinstance(c, Mapping) and c.get("type") != "command")]
                skipped = len(raw["hooks"]) - len(commands)
                if skipped:
                    problems.append(HookProblem(source, f'{event}[{n}]: only `type: "command"` hooks run here'))
                raw = {**raw, "hooks": commands}
            try:
                group = msgspec.convert(raw, HookGroup)
            except msgspec.ValidationError as exc:
                problems.append(HookProblem(source, f"{event}[{n}]: {exc}"))
                continue
            if any(not c.command.strip() for c in group.hooks):
                problems.append(HookProblem(source, f"{event}[{n}]: an empty command (left out)"))
            out += specs_of({cast(HookEventName, event): [group]}, source, origin, plugin_root)
    return out


def specs_of(
    hooks: Mapping[HookEventName, list[HookGroup]], source: str, origin: Origin, plugin_root: str = ""
) -> tuple[HookSpec, ...]:
    """The runnable hooks of validated groups (a skill's or agent's front matter, a file's)."""
    out = []
    for event, groups in hooks.items():
        for group in groups:
            for c in group.hooks:
                command = c.command.replace("${CLAUDE_PLUGIN_ROOT}", plugin_root) if plugin_root else c.command
                if not command.strip():
                    continue
                timeout = c.timeout if c.timeout is not None and c.timeout > 0 else DEFAULT_TIMEOUT
                out.append(HookSpec(event, group.matcher, command, timeout, c.fail_closed, source, origin, plugin_root))
    return tuple(out)


def _read_json(path: Path, problems: list[HookProblem]) -> Any:
    try:
        data = read_regular_file(path, MAX_SETTINGS_BYTES)
    except UnreadableFile as exc:
        problems.append(HookProblem(str(path), str(exc)))
        return None
    if data is None:
        return None
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        problems.append(HookProblem(str(path), f"not valid JSON: {exc}"))
        return None
    return value


def _hooks_of_file(path: Path, origin: Origin, problems: list[HookProblem], plugin_root: str = "") -> list[HookSpec]:
    value = _read_json(path, problems)
    if value is None:
        return []
    if not isinstance(value, Mapping):
        problems.append(HookProblem(str(path), "must be a JSON object"))
        return []
    return parse_hooks(value.get("hooks"), str(path), origin, problems, plugin_root)


def _inside(path: Path, root: Path) -> bool:
    """Is `path`, every symlink followed, inside `root`? (A clone's `.claude` may be a
    link to a folder elsewhere; what it holds is not this workspace's to offer.)"""
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(root))
    except ValueError:
        return False
    return True


def user_files(env: Mapping[str, str]) -> list[Path]:
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    base = env.get("XDG_CONFIG_HOME") or str(home / ".config")
    return [home / ".claude" / "settings.json", Path(base) / "coder" / "config.json"]


def workspace_files(root: Path) -> list[Path]:
    return [
        root / ".claude" / "settings.json",
        root / ".claude" / "settings.local.json",
        root / ".coder" / "config.json",
    ]


def _own(path: Path, problems: list[HookProblem]) -> list[HookProblem]:
    """Where a file's problems go: a coder config file's are said by the config loader already."""
    return [] if path.name == "config.json" else problems


def load_hooks(root: Path, env: Mapping[str, str], *, trusted: bool) -> tuple[list[HookSpec], list[HookProblem], int]:
    """(the hooks that may run, the problems, how many workspace hooks wait for /trust)."""
    problems: list[HookProblem] = []
    specs: list[HookSpec] = []
    for path in user_files(env):
        specs += _hooks_of_file(path, "user", _own(path, problems))
    waiting = 0
    for path in workspace_files(root):
        if not os.path.lexists(path):
            continue
        if not _inside(path, root):
            problems.append(HookProblem(str(path), "leads outside the workspace (a symlink): ignored"))
            continue
        found = _hooks_of_file(path, "workspace", _own(path, problems) if trusted else [])
        if trusted:
            specs += found
        else:
            waiting += len(found)
    return specs, problems, waiting


def plugin_hooks(plugin_root: Path, problems: list[HookProblem]) -> list[HookSpec]:
    """A plugin's `hooks/hooks.json`, `${CLAUDE_PLUGIN_ROOT}` expanded to `plugin_root`
    (also set in the hook's environment). For the plugin loader (a typed `Plugin` record
    gives its root)."""
    return _hooks_of_file(plugin_root / "hooks" / "hooks.json", "plugin", problems, str(plugin_root))


def source_files(root: Path, env: Mapping[str, str]) -> tuple[str, ...]:
    """Every file hooks are read from (the user's, then the workspace's), for `signature`."""
    return tuple(str(p) for p in [*user_files(env), *workspace_files(root)])


def signature(files: Sequence[str]) -> tuple[tuple[str, int, int], ...]:
    """Changes when a hook source changes (size, mtime), so sources are re-read only then."""
    out = []
    for path in files:
        try:
            st = os.stat(path)
        except OSError:
            continue
        out.append((path, st.st_size, st.st_mtime_ns))
    return tuple(out)
