"""One agent turn: stream the model, run its tool calls through the policy, repeat.

The turn sees the engine only through its `TurnContext` (`engine/agent_api.py`): the
session's conversation and shell, the host, the configuration as it is now, and a
callable that stores an "Always allow" rule.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coder_ls.agent.compact import (
    AUTO_COMPACT_SHARE,
    CLEAR_ENOUGH_SHARE,
    add_usage,
    apply_clear,
    apply_summary,
    summarise,
)
from coder_ls.agent.complexity import TODO_REMINDER, is_complex
from coder_ls.agent.grants import SessionGrants
from coder_ls.agent.hooksite import HookSites
from coder_ls.agent.prompt import system_prompt
from coder_ls.agent.references import prompt_content
from coder_ls.agent.requestmsgs import RequestMessages
from coder_ls.agent.skills import UsedSkills
from coder_ls.agent.streaming import watched
from coder_ls.agent.toolcall import ToolCalls
from coder_ls.agent.tools import ToolContext, ToolRegistry, ToolSpec
from coder_ls.agent.tools.base import SubagentRunner
from coder_ls.agent.tools.bash import sandbox_options
from coder_ls.agent.tools.exitplan import PLAN_NOTE
from coder_ls.agent.verify import is_user_verify, should_verify, verify_command, verify_message
from coder_ls.attribution.agentlines import AgentLines, render
from coder_ls.engine.agent_api import TurnContext
from coder_ls.engine.codeaction import path_of
from coder_ls.engine.planmode import propose
from coder_ls.llm.base import (
    ProviderError,
    ProviderRequest,
    Restart,
    Retrying,
    Stop,
    TextDelta,
    ThinkingDelta,
    ThinkingDone,
    ToolCallDone,
    Usage,
)
from coder_ls.llm.request_plan import effort_of
from coder_ls.protocol.actions import RunAgent, ToolGrant
from coder_ls.protocol.config import PLAN as PLAN_PRESET
from coder_ls.protocol.config import Config, Rule
from coder_ls.protocol.events import (
    AssistantDelta,
    AssistantMessage,
    AssistantRestart,
    ContextUsage,
    Notice,
    ReasoningDelta,
    ShellOutput,
    TodoItem,
    TodoUpdated,
    ToolCallBegin,
    ToolCallEnd,
)
from coder_ls.protocol.messages import (
    Block,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from coder_ls.protocol.results import ErrorInfo, UsageData
from coder_ls.saferead import read_text_or_none

if TYPE_CHECKING:
    from coder_ls.hooks.settings import HookSpec
    from coder_ls.llm.base import Provider

ProviderGetter = Callable[[TurnContext], "tuple[Provider, str]"]

log = logging.getLogger(__name__)
INTERRUPTED = "The user interrupted this tool call before it finished."


SELECTION_FILE_BYTES = 16 * 1024 * 1024  # a larger file gives only the selection's place


def _selection_text(turn: TurnContext, action: RunAgent) -> str:
    ctx = action.context
    if ctx is None:
        return ""
    path = path_of(ctx.uri)
    try:
        rel = str(path.relative_to(turn.root))
    except ValueError:
        rel = str(path)
    if ctx.range is None:
        return f"\n\n(The user is looking at {rel}.)"
    doc = turn.host.open_document(path)
    text = doc.text if doc else read_text_or_none(path, SELECTION_FILE_BYTES)  # never a FIFO or device
    if text is None:
        return f"\n\n(The user's selection is in {rel}, lines {ctx.range.start.line + 1}-{ctx.range.end.line + 1}.)"
    lines = text.splitlines()[ctx.range.start.line : ctx.range.end.line + 1]
    limit = turn.config().input.max_attachment_bytes
    snippet = "\n".join(lines)
    cut = len(snippet.encode("utf-8")) > limit
    snippet = snippet.encode("utf-8")[:limit].decode("utf-8", errors="ignore") if cut else snippet
    note = f"\n[the selection was cut at {limit} bytes (input.maxAttachmentBytes)]" if cut else ""
    return (
        f"\n\n(The user's selection: {rel} lines {ctx.range.start.line + 1}-{ctx.range.end.line + 1}:)\n"
        f"```\n{snippet}\n```{note}"
    )


class Turn:
    def __init__(
        self,
        ctx: TurnContext,
        tools: ToolRegistry,
        providers: ProviderGetter,
        specs: list[ToolSpec] | None = None,
        *,
        system: Callable[[Config], str] | None = None,
        subagents: SubagentRunner | None = None,
        actor: str = "Coder",
        hooks: Sequence[HookSpec] = (),  # a skill's or agent's own, while it runs
        agent_type: str | None = None,  # a subagent's definition (its hooks fire SubagentStop)
        request_messages: RequestMessages | None = None,  # the session's, kept from its last turn
    ) -> None:
        self.turn, self.b, self.tools, self.providers = ctx, ctx.result, tools, providers
        self._system = system
        self.specs = specs if specs is not None else tools.specs()  # the same every step (cache prefix)
        self.session = ctx.session
        # built step by step, not from scratch; from the session's last turn on when given
        self.request_messages = request_messages or RequestMessages(ctx.root)
        self.provider, self.model = providers(ctx)
        self.ctx: ToolContext = ToolContext(
            root=ctx.root,
            config=self.config,
            host=ctx.host,
            shell=self.session.agent_shell,
            emit=ctx.emit,
            report=ctx.report,
            todos=self.session.todos,
            grants=self.session.extension(SessionGrants, SessionGrants),
            skills=ctx.skills,
            used_skills=self.session.extension(UsedSkills, UsedSkills).texts,
            actor=actor,
            run_subagents=subagents,
            submission_id=ctx.submission_id,
            agent_lines=self.session.extension(AgentLines, AgentLines),
            subagent=agent_type,
        )
        self.agent_type = agent_type
        self.usage = UsageData()
        self.verify_attempts = 0
        self.paused = False  # the last response ended with `pause_turn` (a server tool's long turn)
        self.turn_grants: tuple[ToolGrant, ...] = ()  # the starting command's allowed-tools
        self.turn_effort: str | None = None  # the starting command's effort (else the session's)
        self.hooks = HookSites(ctx, hooks, agent_type)
        # the session's own agent ends a plan-mode turn with a plan; a subagent (or /task's
        # planner) works in plan mode's preset too, but answers its parent
        self.proposes_plans = agent_type is None and actor == "Coder"
        self.calls = ToolCalls(
            self.ctx,
            tools,
            self.hooks,
            config=lambda: self.config,
            persist_rule=self.turn.persist_rule,
            turn_grants=lambda: self.turn_grants,
        )

    @property
    def config(self) -> Config:
        return self.turn.config()

    def system(self) -> str:
        """The system prompt now (project instructions re-read when their files changed)."""
        if self._system is None:
            return system_prompt(self.turn.root)
        return self._system(self.config)

    @property
    def context_limit(self) -> int:
        """The window of the model the requests go to, as known now (the Models listing may
        come in while a request runs; a /model during the turn changes it)."""
        info = self.provider.catalog.info(self.model)
        return info.context_window if info else self.config.context_limit_tokens

    def record(self, message: Message) -> None:
        self.session.record_message(message, self.turn.submission_id)

    async def run(self, action: RunAgent) -> None:
        self.turn_grants = action.grants
        gate, added = await self.hooks.prompt(action.prompt)
        if gate.blocked or self.hooks.stopped is not None:
            why = gate.reason if gate.blocked else self.hooks.stopped
            self.b.fail("hook_blocked", f"A hook blocked this prompt: {why}", mode="nl")
            return
        self.turn_effort = action.effort
        if self.agent_type is None and self.ctx.agent_lines is not None:  # the code lenses name it
            self.ctx.agent_lines.prompt(self.turn.submission_id, action.prompt)
        text = action.prompt + _selection_text(self.turn, action) + added
        if action.plan and is_complex(action.prompt):
            first_line = action.prompt.strip().splitlines()[0] if action.prompt.strip() else action.prompt
            self.session.todos[:] = [TodoItem(content=first_line[:120], status="in_progress", id="1")]
            self.turn.emit(TodoUpdated(todos=list(self.session.todos)))
            text = f"{text}\n\n{TODO_REMINDER}"
        planning = self.proposes_plans and self.config.permissions == PLAN_PRESET
        if planning:
            text = f"{text}\n\n{PLAN_NOTE}"
        self.record(Message(role="user", content=await prompt_content(self.turn, action, text)))
        final_text = ""
        while True:
            if self.usage.steps >= self.config.max_steps:
                note = f"Stopped after {self.config.max_steps} model steps (maxSteps)."
                self.turn.emit(Notice(message=note))
                self.b.reply = f"{final_text}\n\n[{note}]".strip()
                self.b.error = ErrorInfo(code="max_steps", message=note)
                return
            self.usage.steps += 1
            reply = await self.step()
            if reply is None:
                return  # provider failure: the builder says why
            text_out, calls = reply
            if text_out:
                final_text = text_out
            if calls:
                await self.run_calls(calls)
                if self.hooks.stopped is not None or self.ctx.proposed_plan is not None:
                    break  # a hook stopped the turn, or the plan was handed over
                continue
            if self.paused:  # a server tool (web_search) paused the response: send it back to go on
                continue
            if await self.maybe_verify():
                continue
            if (more := await self.hooks.stop(final_text)) is not None:
                self.record(Message(role="user", content=[TextBlock(text=more)]))
                continue
            break
        if action.review and not self.ctx.findings:
            self.turn.host.publish_findings([])  # nothing found: the last review's findings go
        self.b.reply = final_text
        self.b.data = self.usage
        if planning:
            self.hand_over_plan(final_text)

    def hand_over_plan(self, final_text: str) -> None:
        """Plan mode's end: the plan `exit_plan_mode` handed over, else the final text, as
        `planProposed` (contract section 22)."""
        plan = self.ctx.proposed_plan if self.ctx.proposed_plan is not None else final_text
        if plan.strip():
            self.b.reply = plan
            self.turn.emit(propose(self.session, self.turn.submission_id, plan))

    def tell_user_edits(self) -> None:
        """The user's changes to lines the agent wrote in this session since the last request
        (section 23): told once, as a small diff, so the model does not undo them."""
        lines = self.ctx.agent_lines
        if self.agent_type is not None or lines is None:
            return
        edits = lines.take_user_edits(str(self.turn.root))
        if edits:
            self.record(Message(role="user", content=[TextBlock(text=render(edits))]))

    async def step(self) -> tuple[str, list[ToolUseBlock]] | None:
        # a /model or /permissions sent during the turn applies from this request on
        self.provider, self.model = self.providers(self.turn)
        self.ctx.config = self.config
        if not await self.maybe_compact():
            return None
        self.tell_user_edits()
        self.turn.report("Thinking")
        request = ProviderRequest(
            model=self.model,
            system=self.system(),
            messages=self.request_messages.build(self.session.context),
            tools=self.specs,
            max_tokens=self.config.max_output_tokens,
            thinking_budget=self.config.thinking_budget or None,
            thinking=self.config.thinking,
            effort=effort_of(self.turn_effort or self.session.effort) or self.config.effort,
            timeout_seconds=self.config.request_timeout_seconds,
        )
        self.paused = False
        texts: list[str] = []
        thinking: list[Block] = []
        calls: list[ToolUseBlock] = []
        try:
            async for item in watched(self.provider, request, self.turn.report):
                match item:
                    case TextDelta(text=t):
                        texts.append(t)
                        self.turn.emit(AssistantDelta(text=t))
                    case ThinkingDelta(text=t):
                        self.turn.emit(ReasoningDelta(text=t))
                    case ThinkingDone(thinking=th, signature=sig):
                        thinking.append(ThinkingBlock(thinking=th, signature=sig))
                    case ToolCallDone(id=cid, name=name, input=inp, parse_error=err):
                        calls.append(ToolUseBlock(id=cid, name=name, input=inp))
                        if err:
                            log.info("tool call %s had unparsable input: %s", cid, err)
                    case Usage():
                        self._usage(item)
                    case Restart(reason=reason):
                        texts.clear()
                        thinking.clear()
                        calls.clear()
                        self.turn.emit(AssistantRestart(reason=reason))
                    case Stop(reason=reason):
                        self.paused = reason == "pause_turn"
                    case Retrying():
                        pass  # a retry is reported by `watched`
        except ProviderError as exc:
            partial = "".join(texts)
            if partial:
                self.record(Message(role="assistant", content=[TextBlock(text=partial)]))
            self.b.fail(exc.kind, exc.message, mode="nl")
            self.b.reply = partial or exc.message
            self.b.data = self.usage
            return None
        text = "".join(texts)
        content: list[Block] = [*thinking]
        if text:
            content.append(TextBlock(text=text))
        content.extend(calls)
        if not content:
            content.append(TextBlock(text="(no reply)"))
        self.record(Message(role="assistant", content=content))
        if text:
            self.turn.emit(AssistantMessage(text=text))
        return text, calls

    async def maybe_compact(self) -> bool:
        """Before a step: when the last one used most of the window, compact first: clear old
        tool results (no model call), and summarise only when that was not enough.
        False when the summary request failed (the builder says why; the turn ends)."""
        used = self.session.last_context_tokens
        threshold = AUTO_COMPACT_SHARE * self.context_limit
        if used < threshold or len(self.session.context) < 3:
            return True
        share = 100 * used // self.context_limit
        cleared = apply_clear(self.turn, self.config.compact.keep_tool_results)
        if cleared is not None and (cleared.tokens_after or 0) < CLEAR_ENOUGH_SHARE * self.context_limit:
            note = f"The context was {share}% full: {cleared.cleared} old tool results and outputs were cleared."
            self.turn.emit(Notice(message=note))
            return True
        try:
            summary = await summarise(
                self.turn, self.provider, self.model, self.specs, "", system=self.system(), trigger="auto"
            )
        except ProviderError as exc:
            message = f"Automatic compaction failed: {exc.message}"
            self.b.fail(exc.kind, message, mode="nl")
            self.b.data = self.usage
            return False
        if not summary:
            return True
        if cleared is not None:  # the summary is of the cleared conversation: from its estimate on
            self.session.last_context_tokens = cleared.tokens_after or 0
        done = apply_summary(self.turn, summary + "\n\nContinue with the current step.")
        self.turn.emit(
            Notice(message=f"The context was {share}% full: {done.messages_before} messages were compacted.")
        )
        return True

    def _usage(self, usage: Any) -> None:
        self.usage.input_tokens += usage.input_tokens
        self.usage.output_tokens += usage.output_tokens
        self.usage.cache_read_tokens += usage.cache_read_tokens
        self.usage.cache_write_tokens += usage.cache_write_tokens
        add_usage(self.turn, self.model, usage)
        used = usage.context_tokens + usage.output_tokens
        self.session.last_context_tokens = used
        self.turn.emit(ContextUsage(used_tokens=used, limit_tokens=self.context_limit))

    async def run_calls(self, calls: list[ToolUseBlock]) -> None:
        results: list[ToolResultBlock] = []
        try:
            for call in calls:
                results.append(await self.run_call(call))
        except asyncio.CancelledError:
            done = {r.tool_use_id for r in results}
            results += [
                ToolResultBlock(tool_use_id=c.id, content=INTERRUPTED, is_error=True) for c in calls if c.id not in done
            ]
            self.record(Message(role="user", content=list(results)))
            raise
        self.record(Message(role="user", content=list(results)))

    async def run_call(self, call: ToolUseBlock) -> ToolResultBlock:
        """One call through the pipeline (`agent/toolcall.py`): parse, hooks, policy, ask, run."""
        return await self.calls.run(call)

    def persist_rule(self, rule: Rule) -> None:
        self.calls.persist_rule(rule)

    def check_in_cwd(self, command: str, root: Path) -> str | None:
        """The refused-command check, with relative paths taken from the shell's cwd."""
        return self.calls.check_in_cwd(command, root)

    async def maybe_verify(self) -> bool:
        config, root = self.config, self.turn.root
        command = verify_command(config, root)
        if command is None:
            return False
        from coder_ls.agent.policy import decide

        options = sandbox_options(self.session.agent_shell, config, self.turn.host)
        allowed = (
            decide(
                "bash", {"command": command}, config, self.ctx.grants, root=root, check_command=self.check_in_cwd
            ).action
            == "allow"
        ) or (is_user_verify(config, command) and options.get("box") is not None)
        if not should_verify(config, root, self.ctx.changed_paths, self.verify_attempts, allowed):
            return False
        self.verify_attempts += 1
        self.ctx.changed_paths.clear()
        call_id = f"verify-{self.turn.submission_id[:8]}-{self.verify_attempts}"
        self.turn.emit(ToolCallBegin(call_id=call_id, tool="bash", input={"command": command, "autoVerify": True}))
        self.turn.report(f"Running: {command}")
        result = await self.session.agent_shell.run(
            command,
            on_output=lambda chunk: self.turn.emit(ShellOutput(chunk=chunk)),
            timeout=config.shell.timeout_seconds,
            max_output_bytes=config.shell.max_output_bytes,
            **options,
        )
        failed = result.exit_code != 0 or result.timed_out
        self.turn.emit(ToolCallEnd(call_id=call_id, output=result.output, is_error=failed))
        message = verify_message(command, result.output, result.exit_code, result.timed_out)
        self.record(Message(role="user", content=[TextBlock(text=message)]))
        return True
