"""Our tools as Claude Code names them, both ways, at the hooks' edge.

A hook written for Claude Code matches `Bash`, `Edit|Write`, `Read` and reads
`tool_input.command` or `tool_input.file_path` (absolute). Our tools are `bash`, `edit`,
`write`, `read` with `path` relative to the workspace and camelCase keys. `to_claude`
gives the hook Claude Code's shape; `from_claude` turns an `updatedInput` back into ours
(a path inside the workspace becomes relative again). Tools not in the table (MCP tools
are already `mcp__server__tool`) keep their names and input.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

NAMES: dict[str, str] = {
    "bash": "Bash",
    "shell_output": "BashOutput",
    "shell_kill": "KillShell",
    "read": "Read",
    "write": "Write",
    "edit": "Edit",
    "multiEdit": "MultiEdit",
    "grep": "Grep",
    "glob": "Glob",
    "ls": "LS",
    "todoRead": "TodoRead",
    "todoWrite": "TodoWrite",
    "skill": "Skill",
    "task": "Task",
    "web_fetch": "WebFetch",
}
_OURS = {v: k for k, v in NAMES.items()}
KEYS: dict[str, str] = {
    "path": "file_path",
    "oldString": "old_string",
    "newString": "new_string",
    "replaceAll": "replace_all",
}
_KEYS_BACK = {v: k for k, v in KEYS.items()}
_FILE_TOOLS = frozenset({"read", "write", "edit", "multiEdit"})


def claude_name(tool: str) -> str:
    return NAMES.get(tool, tool)


def our_name(tool: str) -> str:
    return _OURS.get(tool, tool)


def _keys(value: Any, table: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {table.get(k, k): _keys(v, table) for k, v in value.items()}
    if isinstance(value, list):
        return [_keys(v, table) for v in value]
    return value


def to_claude(tool: str, tool_input: Any, root: Path) -> dict[str, Any]:
    data = tool_input if isinstance(tool_input, dict) else {}
    out: dict[str, Any] = _keys(data, KEYS) if tool in NAMES else dict(data)
    if tool in _FILE_TOOLS and isinstance(out.get("file_path"), str):
        out["file_path"] = os.path.normpath(root / out["file_path"])
    if tool == "grep" or tool == "glob" or tool == "ls":
        if isinstance(out.get("file_path"), str):
            out["path"] = os.path.normpath(root / out.pop("file_path"))
    return out


def from_claude(tool: str, updated: dict[str, Any], root: Path) -> dict[str, Any]:
    if tool not in NAMES:
        return dict(updated)
    out: dict[str, Any] = _keys(updated, _KEYS_BACK)
    if tool in ("grep", "glob", "ls") and isinstance(updated.get("path"), str):
        out["path"] = updated["path"]
    if isinstance(out.get("path"), str) and os.path.isabs(out["path"]):
        try:
            out["path"] = Path(out["path"]).relative_to(root).as_posix() or "."
        except ValueError:
            pass  # outside: the policy and the tool decide on it as given
    return out
