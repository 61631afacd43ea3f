"""`/task <goal>`: a goal too large for one context, planned and run by subagents
(contract section 14).

1. **Plan**: a planning agent (read-only tools) ends with the `plan` tool; a plan with
   duplicate ids, unknown or circular dependencies or unknown agents goes back to it as a
   tool error. 2. **Execute**: a step starts once its dependencies completed, at most
   `tasks.maxConcurrency` at once, each as a subagent whose prompt carries its
   dependencies' results; a step failing on a retryable error (rate limit, overload,
   server, connection) is tried again up to `tasks.maxRetries` times with exponential
   backoff; a step that still fails is `failed` and its dependants `skipped`, the others
   go on. 3. **State**: every change is saved (`store/taskstore.py`) before it is
   reported (`taskUpdated`, the progress percentage). An interrupt, a crash or the token
   budget leaves the task `paused`; `/task resume` runs what did not complete. 4. **End**:
   a last subagent writes the report, saved as `.coder/tasks/<id>/report.md`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

import msgspec

from coder_ls.agent.isolated import writes
from coder_ls.agent.subagents import Subagents, SubOutcome, SubSession, subagent_finished
from coder_ls.agent.tools.base import Tool, ToolContext, ToolError, ToolOutput
from coder_ls.engine.agent_api import TurnContext
from coder_ls.engine.results import ResultBuilder
from coder_ls.protocol.actions import RunAgent
from coder_ls.protocol.agents import AgentDef
from coder_ls.protocol.config import RayExecutor
from coder_ls.protocol.events import SubagentStarted, TaskUpdated
from coder_ls.protocol.messages import Message, TextBlock
from coder_ls.protocol.tasks import StepState, TaskRequest, TaskState
from coder_ls.store import taskstore

if TYPE_CHECKING:
    from coder_ls.agent.remotestep import RemoteSteps
    from coder_ls.agent.runner import Agent

RETRYABLE = frozenset({"rate_limit", "overloaded", "server", "connection"})
BACKOFF_SECONDS = 0.5
MAX_STEPS = 40
RESULT_MAX_CHARS = 6_000  # of a dependency's result in a step's prompt

PLAN_PROMPT = """\
Plan how to reach this goal with subagents, then call the `plan` tool once.

Goal: {goal}

Look at the workspace with your read-only tools as much as you need. Each step is run by \
a subagent that sees only its own prompt and the results of the steps it depends on: \
write every prompt so it stands alone (files, names, what to produce). Give each step a \
short unique id, a title, and `dependsOn` for the steps whose results it needs; steps \
without dependencies run in parallel. Agents: {agents} (default general). Keep it to what \
the goal needs (at most {max_steps} steps)."""

REPORT_PROMPT = """\
Write the final report of this task in Markdown: what was done, per step, and what is \
left or failed. Be concise and factual.

Goal: {goal}

{results}"""


class PlanStep(msgspec.Struct, rename="camel", forbid_unknown_fields=True, frozen=True):
    id: Annotated[str, msgspec.Meta(min_length=1, max_length=40)]
    title: str
    prompt: Annotated[str, msgspec.Meta(min_length=1)]
    agent: str | None = None
    depends_on: list[str] = msgspec.field(default_factory=list)


class PlanInput(msgspec.Struct, rename="camel", forbid_unknown_fields=True, frozen=True):
    """The plan: steps with unique ids; dependsOn names earlier steps' ids."""

    steps: list[PlanStep]


def check_plan(steps: list[PlanStep], agents: set[str]) -> str | None:
    """Why the plan cannot run, or None."""
    if not steps or len(steps) > MAX_STEPS:
        return f"a plan has 1 to {MAX_STEPS} steps"
    ids = [s.id for s in steps]
    if len(set(ids)) != len(ids):
        return f"step ids must be unique: {sorted({i for i in ids if ids.count(i) > 1})}"
    for s in steps:
        missing = [d for d in s.depends_on if d not in ids]
        if missing or s.id in s.depends_on:
            return f"step {s.id} depends on {missing or [s.id]}, which is not another step"
        if s.agent and s.agent not in agents:
            return f"step {s.id}: no agent named {s.agent} ({', '.join(sorted(agents))})"
    deps = {s.id: set(s.depends_on) for s in steps}
    done: set[str] = set()
    while len(done) < len(steps):
        ready = [i for i, d in deps.items() if i not in done and d <= done]
        if not ready:
            return f"the dependencies go round in a circle among {sorted(set(ids) - done)}"
        done.update(ready)
    return None


def make_plan_tool(holder: list[PlanStep], agents: set[str]) -> Tool[PlanInput]:
    async def run(ctx: ToolContext, inp: PlanInput) -> ToolOutput:
        problem = check_plan(inp.steps, agents)
        if problem:
            raise ToolError(f"the plan was not accepted: {problem}. Fix it and call plan again.")
        holder[:] = inp.steps
        return ToolOutput(f"Plan accepted: {len(inp.steps)} steps. Stop here; they will be run for you.")

    return Tool("plan", "Submit the task's plan (see the input's description).", PlanInput, run)


def remote_steps(ctx: TurnContext) -> RemoteSteps | None:
    """The remote executor of this task's steps, when `tasks.executor` names one."""
    executor = ctx.config().tasks.executor
    if not isinstance(executor, RayExecutor):
        return None
    from coder_ls.agent.remotestep import RemoteSteps
    from coder_ls.remote.rayexec import RayRunner

    runner = RayRunner(executor, secrets=ctx.config().secrets.env_names)
    return RemoteSteps(ctx, runner)


class TaskRun:
    def __init__(self, agent: Agent, ctx: TurnContext, state: TaskState) -> None:
        self.agent, self.ctx, self.state = agent, ctx, state
        self.runner = Subagents(agent, ctx, depth=0)
        self.defs: dict[str, AgentDef] = {d.name: d for d in ctx.agents()}
        self.remote = remote_steps(ctx)  # tasks.executor kind "ray": steps run on the cluster

    def changed(self) -> None:
        """Save, then report: the state on disk is never behind what the user was told."""
        s = self.state
        s.updated_at = time.time()
        taskstore.save(self.ctx.root, s)
        self.ctx.session.record_task(s)
        done, failed, _, total = s.counts()
        pct = s.percentage()
        running = [st.title for st in s.steps if st.status == "running"]
        message = f"{done}/{total} steps ({pct}%)" + (f": {', '.join(running)[:120]}" if running else "")
        self.ctx.host.report_progress(self.ctx.submission_id, message, pct)
        self.ctx.emit(
            TaskUpdated(task_id=s.id, status=s.status, completed=done, failed=failed, total=total,
                        percentage=pct, tokens_used=s.tokens_used)
        )  # fmt: skip

    async def plan(self) -> str | None:
        from coder_ls.agent.turn import Turn

        holder: list[PlanStep] = []
        names = set(self.defs)
        base, _ = self.agent.tools_for(())
        tools = base.subset(("read", "grep", "glob", "ls"))
        tools.add(make_plan_tool(holder, names))
        result = ResultBuilder(self.ctx.result.session_id, self.ctx.result.submission_id)
        agent_id = f"planner-{uuid.uuid4().hex[:8]}"

        def emit(event: Any) -> None:
            self.ctx.emit(msgspec.structs.replace(event, agent_id=agent_id, parent_call_id=self.state.id))

        pctx = dataclasses.replace(self.ctx, session=cast(Any, SubSession(self.ctx.session)), result=result, emit=emit)
        turn = Turn(pctx, tools, lambda c: self.agent.provider(c), [t.spec() for t in tools],
                    system=lambda config: self.agent.system(config), actor="Coder (task planner)")  # fmt: skip
        prompt = PLAN_PROMPT.format(goal=self.state.goal, agents=", ".join(sorted(names)), max_steps=MAX_STEPS)
        # bracketed like every subagent (contract section 13), so a client can show it end
        emit(SubagentStarted(agent="planner", prompt=f"Plan: {self.state.goal}"[:2000]))
        status: Literal["completed", "cancelled", "failed"] = "cancelled"
        try:
            await turn.run(RunAgent(prompt=prompt, plan=False))
            status = "completed" if holder else "failed"
        finally:
            emit(subagent_finished(status, turn.usage))
        self.state.tokens_used += turn.usage.input_tokens + turn.usage.output_tokens
        if not holder:
            why = result.error.message if result.error else "the planner ended without a valid plan"
            return f"No plan: {why}"
        self.state.steps = [
            StepState(id=p.id, title=p.title, prompt=p.prompt, agent=p.agent, depends_on=list(p.depends_on))
            for p in holder
        ]
        return None

    def step_prompt(self, step: StepState) -> str:
        by_id = {s.id: s for s in self.state.steps}
        parts = [f"This is one step of a larger task. The task's goal: {self.state.goal}", "", step.prompt]
        for dep in step.depends_on:
            parts += ["", f"Result of step {dep} ({by_id[dep].title}):", by_id[dep].result[:RESULT_MAX_CHARS]]
        return "\n".join(parts)

    async def run_step(self, step: StepState) -> SubOutcome:
        definition = self.defs.get(step.agent or "general") or self.defs["general"]
        retries = self.ctx.config().tasks.max_retries
        while True:
            step.attempts += 1
            shown = f"Step {step.id}: {step.title}"
            if self.remote is not None:
                out = await self.remote.run(self.state, step, self.step_prompt(step), shown)
            else:
                isolate = self.ctx.config().tasks.isolation == "worktree"
                apart = (isolate or definition.isolation == "worktree") and writes(definition.tools)
                step.where = "worktree" if apart else "local"
                out = await self.runner.run_one(f"{self.state.id}:{step.id}", definition, self.step_prompt(step),
                                                shown=shown, isolate=isolate)  # fmt: skip
            step.tokens += out.tokens
            self.state.tokens_used += out.tokens
            if out.status == "completed" or out.code not in RETRYABLE or step.attempts > retries:
                return out
            self.changed()
            await asyncio.sleep(BACKOFF_SECONDS * 2 ** (step.attempts - 1))

    def skip_dependants(self) -> None:
        by_id = {s.id: s for s in self.state.steps}
        moved = True
        while moved:
            moved = False
            for s in self.state.steps:
                if s.status == "pending" and any(by_id[d].status in ("failed", "skipped") for d in s.depends_on):
                    s.status, s.result = "skipped", "skipped: a step it depends on did not complete"
                    moved = True

    async def execute(self) -> None:
        s = self.state
        by_id = {st.id: st for st in s.steps}
        running: dict[asyncio.Task[SubOutcome], StepState] = {}
        limit = self.ctx.config().tasks.max_concurrency
        try:
            while True:
                self.skip_dependants()
                ready = [
                    st
                    for st in s.steps
                    if st.status == "pending" and all(by_id[d].status == "completed" for d in st.depends_on)
                ]
                while ready and len(running) < limit and s.tokens_used < s.budget:
                    st = ready.pop(0)
                    st.status = "running"
                    running[asyncio.ensure_future(self.run_step(st))] = st
                    self.changed()
                if not running:
                    if ready and s.tokens_used >= s.budget:
                        s.status, s.note = "paused", f"the token budget ({s.budget:,}) is used up"
                    break
                finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in finished:
                    st = running.pop(task)
                    out = task.result()
                    st.status = "completed" if out.status == "completed" else "failed"
                    st.result = out.text
                    self.changed()
        except asyncio.CancelledError:
            for task, st in running.items():
                task.cancel()
                st.status = "pending"
            await asyncio.gather(*running, return_exceptions=True)
            raise

    async def report(self) -> str:
        results = "\n\n".join(
            f"## {st.id}: {st.title} ({st.status})\n{st.result[:RESULT_MAX_CHARS]}" for st in self.state.steps
        )
        out = await self.runner.run_one(f"{self.state.id}:report", self.defs["general"],
                                     REPORT_PROMPT.format(goal=self.state.goal, results=results),
                                     shown=f"Write the report of the task: {self.state.goal}")  # fmt: skip
        text = out.text if out.status == "completed" else f"# {self.state.goal}\n\n{results}"
        from coder_ls.fsutil import write_atomic

        path = taskstore.tasks_dir(self.ctx.root) / self.state.id / "report.md"
        write_atomic(path, text.encode("utf-8"), root=self.ctx.root)
        self.state.report = str(path.relative_to(self.ctx.root))
        return text


async def run_task(agent: Agent, ctx: TurnContext, request: TaskRequest) -> None:
    b = ctx.result
    b.mode = "nl"
    owned = ctx.owned_tasks
    if request.resume:
        # only a task this user created here (the gate's row `tasks`): a clone's is data
        found = taskstore.load(ctx.root, request.resume) if owned is not None and request.resume in owned else None
        if found is None:
            b.fail("unknown_task", f"/task resume: no task {request.resume}")
            return
        state = found
        for st in state.steps:  # a resume runs the failed and skipped steps again, never the completed
            if st.status in ("failed", "skipped"):
                st.status, st.attempts = "pending", 0
    else:
        now = time.time()
        task_id = time.strftime("%Y%m%d-%H%M%S", time.localtime(now)) + "-" + uuid.uuid4().hex[:4]
        state = TaskState(id=task_id, goal=request.goal, budget=request.budget, created_at=now, updated_at=now)
        if owned is not None:
            owned.add(task_id)  # before its first save: the state on disk is always this user's
    run = TaskRun(agent, ctx, state)
    started = time.monotonic()
    try:
        state.status, state.note = ("planning" if not state.steps else "running"), ""
        run.changed()
        if not state.steps:
            problem = await run.plan()
            if problem:
                state.status, state.note = "failed", problem
                run.changed()
                b.fail("no_plan", problem, mode="nl")
                return
            state.status = "running"
            run.changed()
        await run.execute()
        if state.status != "paused":
            done, _, _, total = state.counts()
            await run.report()
            state.status = "completed" if done == total else "failed"
            if state.status == "failed":
                state.note = "not completed: " + ", ".join(st.id for st in state.steps if st.status != "completed")
            run.changed()
    except asyncio.CancelledError:
        state.status, state.note = "paused", "interrupted"
        run.changed()
        raise
    finally:
        state.elapsed_seconds += time.monotonic() - started
        taskstore.save(ctx.root, state)
    from coder_ls.commands.builtin import task_data

    done, _, _, total = state.counts()
    head = f"Task {state.id} {state.status}: {done}/{total} steps"
    reply = f"{head}. {state.note}".strip() if state.note else head + "."
    if state.report:
        reply += f"\nReport: {state.report}"
    b.reply, b.data = reply, task_data(state)
    if state.status == "failed":
        b.status = "failed"
    ctx.session.record_message(Message(role="user", content=[TextBlock(text=f"(/task {state.goal[:200]})\n{reply}")]),
                               ctx.submission_id)  # fmt: skip
