"""Long-running tasks (contract section 14): the state persisted for each `/task`."""

from __future__ import annotations

from typing import Literal

import msgspec

StepStatus = Literal["pending", "running", "completed", "failed", "skipped"]
TaskStatus = Literal["planning", "running", "paused", "completed", "failed"]
TASK_STATE_VERSION = 1


class StepState(msgspec.Struct, rename="camel", kw_only=True):
    id: str
    title: str
    prompt: str
    agent: str | None = None
    depends_on: list[str] = msgspec.field(default_factory=list)
    status: StepStatus = "pending"
    attempts: int = 0
    tokens: int = 0
    result: str = ""
    where: str = "local"  # "local", "worktree", "ray:<node ip>/<node id>" (contract section 25)


class TaskState(msgspec.Struct, rename="camel", kw_only=True):
    version: int = TASK_STATE_VERSION
    id: str
    goal: str
    status: TaskStatus = "planning"
    budget: int
    tokens_used: int = 0
    created_at: float
    updated_at: float
    elapsed_seconds: float = 0.0  # time spent running, over all resumes
    steps: list[StepState] = msgspec.field(default_factory=list)
    note: str = ""  # why it paused or failed
    report: str | None = None  # the report's path, once written

    def counts(self) -> tuple[int, int, int, int]:
        """(completed, failed, skipped, total)."""
        done = sum(s.status == "completed" for s in self.steps)
        failed = sum(s.status == "failed" for s in self.steps)
        skipped = sum(s.status == "skipped" for s in self.steps)
        return done, failed, skipped, len(self.steps)

    def percentage(self) -> int:
        done, failed, skipped, total = self.counts()
        return (100 * (done + failed + skipped)) // total if total else 0


class TaskRequest(msgspec.Struct, frozen=True):
    """`/task <goal> [--budget N]` (goal) or `/task resume [id]` (resume)."""

    goal: str = ""
    budget: int = 500_000
    resume: str | None = None
