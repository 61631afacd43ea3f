"""One `/task` step on a remote worker (contract section 25, `tasks.executor.kind: "ray"`).

The step takes the workspace as it is when it starts (the base commit and the uncommitted
changes, so the patches of the steps it depends on are in it: `remote/snapshot.py`), runs
on the cluster (`remote/rayexec.py`, which runs `coder-ls exec` there), and comes back as a
patch and a transcript. The transcript is kept as `.coder/tasks/<id>/steps/<step>.jsonl`
(its first line says where the step ran); the patch lands through `isolation.patches`, the
one way an isolated step's work reaches the workspace: all or nothing, with the edit
guards, in the submission's checkpoint (so `/undo` reverts it), one patch at a time in the
order the steps finish. A patch that does not apply fails the step, saying which files.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from typing import TYPE_CHECKING, Literal

from coder_ls.agent.subagents import SubOutcome
from coder_ls.fsutil import write_atomic
from coder_ls.isolation.patches import apply_patch
from coder_ls.protocol.events import SubagentFinished, SubagentStarted, SubagentUsage
from coder_ls.remote import snapshot
from coder_ls.remote.rayexec import RayRunner, RemoteError, RemoteResult
from coder_ls.remote.snapshot import SnapshotError
from coder_ls.store import taskstore

if TYPE_CHECKING:
    from coder_ls.engine.agent_api import TurnContext
    from coder_ls.protocol.tasks import StepState, TaskState


def read_transcript(text: str) -> tuple[str, int, str]:
    """(the step's last answer, the tokens its context reached, the last error said)."""
    answer, tokens, error = "", 0, ""
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        kind = event.get("type") if isinstance(event, dict) else None
        if kind == "assistantMessage" and event.get("agentId") is None:
            answer = str(event.get("text", ""))
        elif kind == "contextUsage":
            tokens = max(tokens, int(event.get("usedTokens") or 0))
        elif kind == "error":
            error = str(event.get("message", ""))
    return answer, tokens, error


class RemoteSteps:
    """The remote half of one `/task` run: its cluster connection, its bundles, its patch lock."""

    def __init__(self, ctx: TurnContext, runner: RayRunner) -> None:
        self.ctx, self.runner = ctx, runner
        self.bundles: dict[str, bytes] = {}
        self.landing = asyncio.Lock()  # one patch at a time

    async def run(self, state: TaskState, step: StepState, prompt: str, shown: str) -> SubOutcome:
        agent_id = f"remote-{uuid.uuid4().hex[:8]}"
        call_id = f"{state.id}:{step.id}"
        self.ctx.emit(SubagentStarted(agent=step.agent or "general", prompt=shown[:2000],
                                      agent_id=agent_id, parent_call_id=call_id))  # fmt: skip
        status: Literal["completed", "cancelled", "failed"] = "cancelled"
        tokens = 0
        try:
            out = await self._run(state, step, prompt)
            status = "completed" if out.status == "completed" else "failed"
            tokens = out.tokens
            return out
        finally:
            usage = SubagentUsage(input_tokens=tokens, output_tokens=0, steps=0)
            self.ctx.emit(SubagentFinished(status=status, usage=usage, agent_id=agent_id, parent_call_id=call_id))

    async def _run(self, state: TaskState, step: StepState, prompt: str) -> SubOutcome:
        root = self.ctx.root
        try:
            snap = await snapshot.take(root, self.bundles)
            result = await self.runner.run(snap, prompt, f"coder-ls {state.id} {step.id}")
        except (RemoteError, SnapshotError) as exc:
            return SubOutcome("failed", str(exc), code="remote")
        step.where = result.where
        self._keep(state, step, result)
        answer, tokens, error = read_transcript(result.transcript)
        if result.exit_code != 0:
            why = error or result.stderr.strip().splitlines()[-1:] or [f"exit code {result.exit_code}"]
            text = why if isinstance(why, str) else why[0]
            return SubOutcome("failed", f"the step failed on {result.where}: {text}", code="remote", tokens=tokens)
        async with self.landing:
            landed = await apply_patch(result.patch, root=root, editor=self.ctx.host, label=f"Coder: step {step.id}")
        if not landed.ok:
            return SubOutcome("failed", f"{answer}\n\nIts patch did not land: {landed.message}".strip(),
                              code="patch", tokens=tokens)  # fmt: skip
        return SubOutcome("completed", answer or landed.message, tokens=tokens)

    def _keep(self, state: TaskState, step: StepState, result: RemoteResult) -> None:
        name = re.sub(r"[^A-Za-z0-9_-]", "_", step.id)  # the id is the model's: never a path
        path = taskstore.tasks_dir(self.ctx.root) / state.id / "steps" / f"{name}.jsonl"
        write_atomic(path, result.transcript.encode("utf-8"), root=self.ctx.root)
