"""The untrusted workspace: one gate between what arrives with a clone and what may act.

Everything a repository carries is data, not instructions, until the user runs `/trust`
(VS Code's Restricted Mode is the model). `BOUNDARY` is the one list of what an untrusted
workspace may and may not do, row by row; the loaders consult the functions below it (no
other module decides), and docs/security.md renders the same rows as one table (a test
checks that they agree).

`/trust` records two things in the user's state directory, outside every workspace: that
the user trusts the folder (its command files, skills and agent definitions then act as
the user's), and a digest of the exact widening values of its `.coder/config.json` (change
one, by a pull or an approved agent write, and it is asked again). The user's own files
and the editor's settings are the user's and need no trust; `/permissions` and "Always
allow" write the workspace file for the user, so what they write is trusted when the rest
of the file already was.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

PRESETS = ("strict", "balanced", "auto-edit", "yolo")  # narrowest first

Origin = Literal["builtin", "user", "workspace"]
Area = Literal["config", "commands", "agents", "tasks", "sessions", "checkpoints", "mcp", "hooks"]


@dataclass(frozen=True)
class BoundaryRow:
    """What one kind of workspace file may do before and after `/trust`."""

    area: Area
    files: str
    untrusted: str
    trusted: str


BOUNDARY: tuple[BoundaryRow, ...] = (
    BoundaryRow(
        "config",
        "`.coder/config.json`",
        "narrows only: its `rules`, `secrets.envNames` and `sandbox.network.deniedDomains` are added to the "
        "user's (a deny wins); a wider preset, `allow` rules, `sandbox` off/network/allowed domains/writable "
        "roots/autoAllow on, verify commands, "
        '`allowOutsideWorkspace`, `allowInsecureBaseUrl`, `provider`, `model: "scripted"` and `scriptedFile` '
        "are left out with "
        "one warning",
        "the widening values apply, as they were when trusted (a change is asked again)",
    ),
    BoundaryRow(
        "commands",
        "`.coder/commands/`, `.claude/commands/`, `.coder/skills/`, `.claude/skills/`",
        "load as prompts; never replace a built-in or the user's own command; `allowed-tools` grant "
        "nothing; each `` !`cmd` `` runs only after the user approves the exact commands",
        "`allowed-tools` grant for the turn; `` !`cmd` `` runs in the user's shell unasked",
    ),
    BoundaryRow(
        "agents",
        "`.coder/agents/`, `.claude/agents/`",
        "load, but never replace a built-in agent (`general`, `explore`) or the user's own; "
        "their `model:` is ignored (the session's model is used)",
        "their `model:` applies",
    ),
    BoundaryRow(
        "tasks",
        "`.coder/tasks/<id>/state.json`",
        "only tasks this user created here (their ids are recorded in the user's state directory) "
        "are listed and resumed; any other is ignored",
        "the same: trust does not make a shipped task the user's",
    ),
    BoundaryRow(
        "sessions",
        "`.coder/sessions/*.jsonl`",
        "only sessions this user created here (recorded in the user's state directory) can be "
        "resumed; a shipped log is not listed",
        "the same: trust does not make a shipped log the user's",
    ),
    BoundaryRow(
        "checkpoints",
        "`.coder/checkpoints/` (`records.json`, the snapshot repository)",
        "only the submissions this user's server snapshotted here (recorded in the user's state "
        'directory) are undone or offered for "Revert agent change"; other records are dropped',
        "the same: trust does not make a shipped record the user's",
    ),
    BoundaryRow(
        "mcp",
        "`.mcp.json`, `mcpServers` in `.coder/config.json`, a plugin's `.mcp.json` inside the workspace",
        "nothing starts and no `${VAR}` is read for it: its servers are listed by `/mcp` as waiting "
        "for `/trust`, said once",
        "its servers start (lazily, in the background) with the scrubbed environment plus their `env`, "
        "as `.mcp.json` was when trusted (a change is asked again); their tools ask like any other",
    ),
    BoundaryRow(
        "hooks",
        "`.claude/settings.json`, `.claude/settings.local.json`, `hooks` in `.coder/config.json`, "
        "a workspace skill's or agent's `hooks:` front matter",
        "none runs (said once: how many wait for `/trust`); a file reached through a symlink leading out "
        "of the workspace never runs, trusted or not",
        "they run as the user's hooks (not sandboxed, scrubbed environment, a timeout); a hook's `allow` "
        "never beats a deny rule, the refused-command check or a protected path",
    ),
)

# The config lists a workspace adds to instead of replacing (the user's entries stay).
MERGED_LISTS: tuple[tuple[str, ...], ...] = (
    ("rules",),
    ("secrets", "envNames"),
    ("commands", "disabled"),
    ("sandbox", "network", "deniedDomains"),
)


def state_dir(env: Mapping[str, str]) -> Path:
    """The user's state directory of coder-ls (created), or its fallback (`coder_ls.userdirs`)."""
    from coder_ls.userdirs import state_dir as user_state_dir

    return user_state_dir(env)


# -- config row ----------------------------------------------------------------------------
def split_widening(values: Mapping[str, Any], base_preset: str = "balanced") -> tuple[dict[str, Any], dict[str, Any]]:
    """(`values` without the widening settings, the widening settings) of one layer's
    values (already expanded from dotted keys). A preset widens when it is wider than
    `base_preset` (the user's own, else the default). Only well-formed widening values
    count: an ill-typed one is dropped later as invalid anyway."""
    kept: dict[str, Any] = copy.deepcopy(dict(values))
    wide: dict[str, Any] = {}
    preset = kept.get("permissions")
    base = PRESETS.index(base_preset) if base_preset in PRESETS else PRESETS.index("balanced")
    if preset in PRESETS and PRESETS.index(preset) > base:
        wide["permissions"] = kept.pop("permissions")
    for key in ("allowOutsideWorkspace", "allowInsecureBaseUrl"):  # the key over plain http: the user's call
        if kept.get(key) is True:
            wide[key] = kept.pop(key)
    # who plays the agent: a "scripted" provider replays the repository's own JSON
    if isinstance(kept.get("provider"), str) and kept["provider"] != "anthropic":
        wide["provider"] = kept.pop("provider")
    if kept.get("model") == "scripted":  # the model name alone selects the scripted provider
        wide["model"] = kept.pop("model")
    if isinstance(kept.get("scriptedFile"), str):
        wide["scriptedFile"] = kept.pop("scriptedFile")
    if isinstance(kept.get("mcpServers"), dict) and kept["mcpServers"]:
        wide["mcpServers"] = kept.pop("mcpServers")  # a server is a program the repository names
    rules = kept.get("rules")
    if isinstance(rules, list):
        allow = [r for r in rules if isinstance(r, dict) and r.get("action") == "allow"]
        if allow:
            wide["rules"] = allow
            kept["rules"] = [r for r in rules if not (isinstance(r, dict) and r.get("action") == "allow")]
    workflow = kept.get("workflow")
    if isinstance(workflow, dict) and isinstance(workflow.get("verifyCommands"), list) and workflow["verifyCommands"]:
        # the user's own verify command runs unasked when sandboxed: the repo's is not the user's
        wide["workflow"] = {"verifyCommands": workflow.pop("verifyCommands")}
    tasks = kept.get("tasks")
    if isinstance(tasks, dict) and isinstance(tasks.get("executor"), dict) and tasks["executor"].get("kind") != "local":
        # steps elsewhere: the repository and the prompts go to a cluster the repository names
        wide["tasks"] = {"executor": tasks.pop("executor")}
    sandbox = kept.get("sandbox")
    if isinstance(sandbox, dict):
        wide_sandbox = {}
        if sandbox.get("mode") == "off":
            wide_sandbox["mode"] = sandbox.pop("mode")
        network = sandbox.get("network")
        if network is True:
            wide_sandbox["network"] = sandbox.pop("network")
        elif isinstance(network, dict) and network.get("allowedDomains"):
            # domains it allows widen (even over the user's `true`: they are the repository's
            # choice); the ones it denies only narrow, and add to the user's
            wide_sandbox["network"] = {"allowedDomains": network.pop("allowedDomains")}
            if not network:  # nothing left to say: the user's own `network` stands
                sandbox.pop("network")
        if isinstance(sandbox.get("writableRoots"), list) and sandbox["writableRoots"]:
            wide_sandbox["writableRoots"] = sandbox.pop("writableRoots")
        if sandbox.get("autoAllow") is True:  # it may turn unasked sandboxed runs off, never on
            wide_sandbox["autoAllow"] = sandbox.pop("autoAllow")
        if wide_sandbox:
            wide["sandbox"] = wide_sandbox
    return kept, wide


def describe_widening(wide: Mapping[str, Any]) -> str:
    parts = []
    if "permissions" in wide:
        parts.append(f"permissions {wide['permissions']!r}")
    parts += [key for key in ("allowOutsideWorkspace", "allowInsecureBaseUrl") if key in wide]
    if "provider" in wide:
        parts.append(f"provider {wide['provider']!r}")
    if "model" in wide:
        parts.append(f"model {wide['model']!r}")
    if "scriptedFile" in wide:
        parts.append(f"scriptedFile {wide['scriptedFile']!r}")
    for name in wide.get("mcpServers", {}):
        parts.append(f"MCP server {name!r}")
    for r in wide.get("rules", []):
        what = r.get("command") or r.get("path") or r.get("domain") or "any"
        parts.append(f"allow rule {r.get('tool', '?')} {what!r}")
    for command in wide.get("workflow", {}).get("verifyCommands", []):
        parts.append(f"verify command {command!r}")
    for key, value in wide.get("sandbox", {}).items():
        parts.append(f"sandbox.{key} {json.dumps(value)}")
    if "tasks" in wide:
        executor = wide["tasks"]["executor"]
        parts.append(f"tasks.executor {executor.get('kind')!r} at {executor.get('address')!r}")
    return ", ".join(parts)


def digest(wide: Mapping[str, Any]) -> str:
    import hashlib  # not on the `initialize` path: only a workspace file that widens needs it

    return hashlib.sha256(json.dumps(wide, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


# -- commands and agents rows -----------------------------------------------------------------
def may_replace(
    origin: Origin, name: str, reserved: frozenset[str], users: frozenset[str], what: str = "command"
) -> str | None:
    """Why a file of `origin` may not define `name`, or None. `reserved`: the built-in names
    it cannot take (for the user's files the local commands only: the user may replace a
    built-in prompt command; for a workspace's, every built-in); `users`: the names the
    user's own files took, which a workspace's cannot take."""
    if name in reserved:
        if origin == "workspace":
            return f"{name!r} is a built-in {what}: a workspace file cannot replace it"
        return f"/{name} is a built-in {what} and cannot be replaced"
    if origin == "workspace" and name in users:
        return f"{name!r} is your own (from your config folder): the workspace's is ignored"
    return None


def acts_as_user(origin: Origin, trusted: bool) -> bool:
    """May a file of `origin` grant tools, run its `` !`cmd` `` unasked or pick a model?"""
    return origin != "workspace" or trusted


# -- the user's answers and records -------------------------------------------------------------
class TrustStore:
    """The user's answers, per workspace root: trusted as a folder (by `/trust`), and the
    digest of the widening config values trusted."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.path = state_dir(env) / "trusted-workspaces.json"
        # the answers as last read, under the file's identity then: asked at every hook event
        # and tool call, the file is read again only when it changed (another server's
        # `/trust` replaces it: a new inode)
        self._read: tuple[tuple[int, int, int, int], dict[str, dict[str, Any]]] | None = None

    def _answers(self) -> dict[str, dict[str, Any]]:
        """The answers, for reading only (`_load` gives a copy to change)."""
        try:
            st = os.stat(self.path)
        except OSError:
            return {}
        sig = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if self._read is None or self._read[0] != sig:
            self._read = (sig, self._load())
        return self._read[1]

    def _load(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        out: dict[str, dict[str, Any]] = {}
        for root, value in data.items():
            if isinstance(value, str):  # before folder trust: the config digest alone
                out[root] = {"config": value}
            elif isinstance(value, dict):
                out[root] = {k: v for k, v in value.items() if k in ("config", "folder")}
        return out

    def is_trusted(self, root: Path, wide: Mapping[str, Any]) -> bool:
        return not wide or self._answers().get(str(root), {}).get("config") == digest(wide)

    def folder_trusted(self, root: Path) -> bool:
        return self._answers().get(str(root), {}).get("folder") is True

    def trust(self, root: Path, wide: Mapping[str, Any], *, folder: bool = True) -> None:
        """Record `wide` as the trusted config values; `folder`: `/trust` itself (else the
        user's own change to a file, which keeps the folder's answer as it was)."""
        data = self._load()
        entry = data.get(str(root), {})
        entry["config"] = digest(wide)
        if folder:
            entry["folder"] = True
        data[str(root)] = entry
        self._save(data)

    def _save(self, data: Mapping[str, Any]) -> None:
        from coder_ls.fsutil import ANYWHERE, write_atomic

        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        text = json.dumps(data, indent=2, sort_keys=True) + "\n"
        write_atomic(self.path, text.encode(), root=ANYWHERE, new_mode=0o600)  # the user's own record


class OwnedIds:
    """The ids of the tasks or sessions this user created in one workspace, kept in the
    user's state directory: what a clone ships under `.coder/` is not among them. One id a
    line, appended (a new session costs one small write, however many came before)."""

    def __init__(self, env: Mapping[str, str], root: Path, kind: Literal["tasks", "sessions", "checkpoints"]) -> None:
        import hashlib

        key = hashlib.sha256(str(root).encode()).hexdigest()[:24]
        self.path = state_dir(env) / "owned" / f"{kind}-{key}.txt"

    def ids(self) -> set[str]:
        """Read each time: another server of the same user may have added one."""
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return set()
        return {line for line in text.splitlines() if line}

    def __contains__(self, item_id: object) -> bool:
        return isinstance(item_id, str) and item_id in self.ids()

    def add(self, item_id: str) -> None:
        if not item_id or "\n" in item_id:
            raise ValueError(f"not an id: {item_id!r}")
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(self.path, flags, 0o600)
        try:
            os.write(fd, f"{item_id}\n".encode())  # one write: appends never interleave
        finally:
            os.close(fd)
