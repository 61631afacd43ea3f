"""Where `/task` keeps its state: `.coder/tasks/<id>/state.json`, replaced atomically on
every change before the change is reported, so a crash leaves the last state on disk
(a task found `running` there was cut off: it reads as paused). The report goes beside it.

A clone can ship `.coder/tasks/` too (forged prompts, a forged "already approved" result,
a `createdAt` in the future to be the newest): only the tasks whose ids this user's server
recorded when it created them (`owned`, `trust.OwnedIds`, kept outside the workspace) are
listed, found and resumed (the gate's row `tasks`)."""

from __future__ import annotations

from collections.abc import Container
from pathlib import Path

import msgspec

from coder_ls.protocol.tasks import TaskState

STATE_FILE = "state.json"


def tasks_dir(root: Path) -> Path:
    return root / ".coder" / "tasks"


def save(root: Path, state: TaskState) -> None:
    from coder_ls.fsutil import write_atomic

    path = tasks_dir(root) / state.id / STATE_FILE
    write_atomic(path, msgspec.json.encode(state), root=root, fsync=False)


def load(root: Path, task_id: str) -> TaskState | None:
    from coder_ls.saferead import UnreadableFile, read_regular_file

    if not task_id or "/" in task_id or task_id.startswith("."):
        return None
    try:
        data = read_regular_file(tasks_dir(root) / task_id / STATE_FILE, 16 * 1024 * 1024)
        state = msgspec.json.decode(data or b"", type=TaskState)
    except (UnreadableFile, OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    if state.status in ("running", "planning"):  # the server stopped while it ran
        state.status = "paused"
        state.note = state.note or "the server stopped while it ran"
        for step in state.steps:
            if step.status == "running":
                step.status = "pending"
    return state


def list_tasks(root: Path, owned: Container[str]) -> list[TaskState]:
    """This user's tasks of the workspace, newest first."""
    try:
        ids = [p.name for p in tasks_dir(root).iterdir() if p.is_dir() and p.name in owned]
    except OSError:
        return []
    found = [s for s in (load(root, i) for i in ids) if s is not None and s.id in owned]
    return sorted(found, key=lambda s: s.created_at, reverse=True)


def find(root: Path, task_id: str | None, owned: Container[str]) -> TaskState | None:
    """One of this user's tasks by id or unique prefix; the newest when no id is given."""
    tasks = list_tasks(root, owned)
    if not task_id:
        return tasks[0] if tasks else None
    matches = [t for t in tasks if t.id.startswith(task_id)]
    return matches[0] if len(matches) == 1 else None
