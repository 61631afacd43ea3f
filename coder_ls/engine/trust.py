"""Workspace trust: what a workspace's own `.coder/config.json` may widen.

A workspace is hostile input: a cloned repository can carry a `.coder/config.json` that
says `"permissions": "yolo"` or `"sandbox": {"mode": "off"}`, and every command would run
unasked the moment the editor opens it. The settings that widen what runs without a
question are therefore taken from the workspace file only once the user has trusted
them (`/trust`); until then they are left out, with one warning naming them. Everything
else in the file (the model, rules that ask or deny, timeouts) applies at once. Trust is for the exact widening values:
change one and it is asked again. The user's own file and the editor's settings are the
user's and need no trust; `/permissions` and "Always allow" write the workspace file for
the user, so what they write is trusted when the rest of the file already was.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

PRESETS = ("strict", "balanced", "auto-edit", "yolo")  # narrowest first


def state_dir(env: Mapping[str, str]) -> Path:
    base = env.get("XDG_STATE_HOME") or os.path.join(env.get("HOME", os.path.expanduser("~")), ".local", "state")
    return Path(base) / "coder"


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
    if kept.get("allowOutsideWorkspace") is True:
        wide["allowOutsideWorkspace"] = kept.pop("allowOutsideWorkspace")
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
    sandbox = kept.get("sandbox")
    if isinstance(sandbox, dict):
        wide_sandbox = {}
        if sandbox.get("mode") == "off":
            wide_sandbox["mode"] = sandbox.pop("mode")
        if sandbox.get("network") is True:
            wide_sandbox["network"] = sandbox.pop("network")
        if isinstance(sandbox.get("writableRoots"), list) and sandbox["writableRoots"]:
            wide_sandbox["writableRoots"] = sandbox.pop("writableRoots")
        if wide_sandbox:
            wide["sandbox"] = wide_sandbox
    return kept, wide


def describe_widening(wide: Mapping[str, Any]) -> str:
    parts = []
    if "permissions" in wide:
        parts.append(f"permissions {wide['permissions']!r}")
    if "allowOutsideWorkspace" in wide:
        parts.append("allowOutsideWorkspace")
    for r in wide.get("rules", []):
        what = r.get("command") or r.get("path") or "any"
        parts.append(f"allow rule {r.get('tool', '?')} {what!r}")
    for command in wide.get("workflow", {}).get("verifyCommands", []):
        parts.append(f"verify command {command!r}")
    for key, value in wide.get("sandbox", {}).items():
        parts.append(f"sandbox.{key} {json.dumps(value)}")
    return ", ".join(parts)


def digest(wide: Mapping[str, Any]) -> str:
    import hashlib  # not on the `initialize` path: only a workspace file that widens needs it

    return hashlib.sha256(json.dumps(wide, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class TrustStore:
    """The user's answers: workspace root -> digest of the widening settings trusted."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.path = state_dir(env) / "trusted-workspaces.json"

    def _load(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}

    def is_trusted(self, root: Path, wide: Mapping[str, Any]) -> bool:
        return not wide or self._load().get(str(root)) == digest(wide)

    def trust(self, root: Path, wide: Mapping[str, Any]) -> None:
        from coder_ls.fsutil import write_atomic

        data = self._load()
        if wide:
            data[str(root)] = digest(wide)
        else:
            data.pop(str(root), None)
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_atomic(self.path, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode(), new_mode=0o600)
