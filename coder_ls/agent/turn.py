"""One agent turn: stream the model, run its tool calls through the policy, repeat."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import msgspec

from coder_ls.agent.complexity import TODO_REMINDER, is_complex
from coder_ls.agent.prompt import system_prompt
from coder_ls.agent.verify import should_verify, verify_command, verify_message
from coder_ls.engine.results import ResultBuilder
from coder_ls.engine.submission import SubmissionState
from coder_ls.protocol.actions import RunAgent
from coder_ls.protocol.config import Rule
from coder_ls.protocol.events import (
    AssistantDelta,
    AssistantMessage,
    ContextUsage,
    Notice,
    ReasoningDelta,
    ShellOutput,
    TodoItem,
    TodoUpdated,
    ToolCallBegin,
    ToolCallEnd,
)
from coder_ls.protocol.messages import Block, Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from coder_ls.protocol.results import ErrorInfo, UsageData

if TYPE_CHECKING:
    from coder_ls.agent.tools import ToolContext, ToolRegistry
    from coder_ls.engine.executor import Engine
    from coder_ls.engine.session import Session
    from coder_ls.llm.base import Provider

log = logging.getLogger(__name__)
INTERRUPTED = "The user interrupted this tool call before it finished."


def merge_roles(messages: list[Message]) -> list[Message]:
    """The API wants alternating roles: merge neighbours of the same role."""
    out: list[Message] = []
    for m in messages:
        if out and out[-1].role == m.role:
            first, second = out[-1].content, m.content
            # tool results must lead a user message
            results = [b for b in [*first, *second] if isinstance(b, ToolResultBlock)]
            rest = [b for b in [*first, *second] if not isinstance(b, ToolResultBlock)]
            out[-1] = Message(role=m.role, content=[*results, *rest])
        else:
            out.append(Message(role=m.role, content=list(m.content)))
    return out


def _selection_text(engine: Engine, action: RunAgent) -> str:
    ctx = action.context
    if ctx is None:
        return ""
    from coder_ls.engine.codeaction import path_of

    path = path_of(ctx.uri)
    try:
        rel = str(path.relative_to(engine.root))
    except ValueError:
        rel = str(path)
    if ctx.range is None:
        return f"\n\n(The user is looking at {rel}.)"
    doc = engine.host.open_document(path)
    try:
        text = doc.text if doc else path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return f"\n\n(The user's selection is in {rel}, lines {ctx.range.start.line + 1}-{ctx.range.end.line + 1}.)"
    lines = text.splitlines()[ctx.range.start.line : ctx.range.end.line + 1]
    snippet = "\n".join(lines)[:8000]
    return (
        f"\n\n(The user's selection: {rel} lines {ctx.range.start.line + 1}-{ctx.range.end.line + 1}:)\n"
        f"```\n{snippet}\n```"
    )


class Turn:
    def __init__(self, engine: Engine, state: SubmissionState, b: ResultBuilder, provider: Provider) -> None:
        from coder_ls.agent.tools import ToolContext
        from coder_ls.llm.models import find_model

        self.engine, self.state, self.b, self.provider = engine, state, b, provider
        self.session = state.session
        self.config = engine.config
        self.model = self.session.model or self.config.model
        info = find_model(self.model)
        self.context_limit = info.context_window if info else self.config.context_limit_tokens
        self.tools: ToolRegistry = engine_tools(engine)
        self.ctx: ToolContext = ToolContext(
            root=engine.root,
            config=self.config,
            host=engine.host,
            shell=self.session.shell,
            emit=state.emit,
            report=state.report,
            todos=self.session.todos,
            grants=self.session.grants,
        )
        self.usage = UsageData()
        self.verify_attempts = 0

    def record(self, message: Message) -> None:
        self.session.record_message(message, self.state.id)

    async def run(self, action: RunAgent) -> None:
        text = action.prompt + _selection_text(self.engine, action)
        if is_complex(action.prompt):
            first_line = action.prompt.strip().splitlines()[0] if action.prompt.strip() else action.prompt
            self.session.todos[:] = [TodoItem(content=first_line[:120], status="in_progress", id="1")]
            self.state.emit(TodoUpdated(todos=list(self.session.todos)))
            text = f"{text}\n\n{TODO_REMINDER}"
        self.record(Message(role="user", content=[TextBlock(text=text)]))
        final_text = ""
        while True:
            if self.usage.steps >= self.config.max_steps:
                note = f"Stopped after {self.config.max_steps} model steps (maxSteps)."
                self.state.emit(Notice(message=note))
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
                continue
            if await self.maybe_verify():
                continue
            break
        self.b.reply = final_text
        self.b.data = self.usage

    async def step(self) -> tuple[str, list[ToolUseBlock]] | None:
        from coder_ls.llm.base import (
            ProviderError,
            ProviderRequest,
            Retrying,
            Stop,
            TextDelta,
            ThinkingDelta,
            ThinkingDone,
            ToolCallDone,
            Usage,
        )

        await self.maybe_compact()
        self.state.report("Thinking")
        request = ProviderRequest(
            model=self.model,
            system=system_prompt(self.engine.root),
            messages=merge_roles(self.session.context),
            tools=self.tools.specs(),
            max_tokens=self.config.max_output_tokens,
            thinking_budget=self.config.thinking_budget or None,
        )
        texts: list[str] = []
        thinking: list[Block] = []
        calls: list[ToolUseBlock] = []
        try:
            stream = self.provider.stream(request)
            try:
                async for item in stream:
                    match item:
                        case TextDelta(text=t):
                            texts.append(t)
                            self.state.emit(AssistantDelta(text=t))
                        case ThinkingDelta(text=t):
                            self.state.emit(ReasoningDelta(text=t))
                        case ThinkingDone(thinking=th, signature=sig):
                            thinking.append(ThinkingBlock(thinking=th, signature=sig))
                        case ToolCallDone(id=cid, name=name, input=inp, parse_error=err):
                            calls.append(ToolUseBlock(id=cid, name=name, input=inp))
                            if err:
                                log.info("tool call %s had unparsable input: %s", cid, err)
                        case Usage():
                            self._usage(item)
                        case Retrying(delay_seconds=delay, reason=reason, discard=discard):
                            self.state.report(f"Retrying in {delay:.0f}s ({reason})")
                            if discard:
                                texts.clear()
                                thinking.clear()
                                calls.clear()
                        case Stop():
                            pass
            finally:
                aclose = getattr(stream, "aclose", None)
                if aclose is not None:
                    await aclose()
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
            self.state.emit(AssistantMessage(text=text))
        return text, calls

    async def maybe_compact(self) -> None:
        """Before a step: when the last one used most of the window, summarise first."""
        from coder_ls.agent.compact import AUTO_COMPACT_SHARE, apply_summary, summarise

        used = self.session.last_context_tokens
        if used < AUTO_COMPACT_SHARE * self.context_limit or len(self.session.context) < 3:
            return
        summary = await summarise(self.engine, self.state, self.provider, self.model, "")
        if not summary:
            return
        before = apply_summary(self.state, summary + "\n\nContinue with the current step.")
        share = 100 * used // self.context_limit
        self.state.emit(Notice(message=f"The context was {share}% full: {before} messages were compacted."))

    def _usage(self, usage: Any) -> None:
        self.usage.input_tokens += usage.input_tokens
        self.usage.output_tokens += usage.output_tokens
        self.usage.cache_read_tokens += usage.cache_read_tokens
        self.usage.cache_write_tokens += usage.cache_write_tokens
        used = usage.context_tokens + usage.output_tokens
        self.session.last_context_tokens = used
        self.state.emit(ContextUsage(used_tokens=used, limit_tokens=self.context_limit))

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
        from coder_ls.agent.policy import approve, decide, describe_call
        from coder_ls.engine.safety import check_command

        self.state.emit(ToolCallBegin(call_id=call.id, tool=call.name, input=call.input))
        self.ctx.call_id = call.id
        tool = self.tools.get(call.name)
        if tool is None:
            text, is_error = f"Unknown tool {call.name!r}. Tools: {', '.join(self.tools.names())}.", True
        else:
            decision = decide(
                call.name,
                call.input,
                self.engine.config,
                self.session.grants,
                root=self.engine.root,
                check_command=check_command,
            )
            text, is_error = "", False
            if decision.action == "deny":
                text, is_error = f"Not allowed: {decision.reason}", True
            elif decision.action == "ask":
                summary = describe_call(call.name, call.input, self.engine.root)
                answer = await approve(self.ctx, call.name, call.input, summary, self.persist_rule, call_id=call.id)
                if not answer.allowed:
                    text, is_error = answer.message, True
            if not text:
                self.ctx.config = self.engine.config
                output = await tool.call(self.ctx, call.input)
                text, is_error = output.text, output.is_error
        self.state.emit(ToolCallEnd(call_id=call.id, output=text, is_error=is_error))
        return ToolResultBlock(tool_use_id=call.id, content=text, is_error=is_error)

    def persist_rule(self, rule: Rule) -> None:
        as_dict = {k: v for k, v in msgspec.to_builtins(rule).items() if v is not None}
        self.engine.config_store.update_workspace(lambda c: c.setdefault("rules", []).append(as_dict))
        self.engine.reload_config()
        self.ctx.config = self.engine.config

    async def maybe_verify(self) -> bool:
        from coder_ls.agent.policy import decide
        from coder_ls.engine.safety import check_command

        config, root = self.engine.config, self.engine.root
        command = verify_command(config, root)
        if command is None:
            return False
        allowed = (
            decide(
                "bash", {"command": command}, config, self.session.grants, root=root, check_command=check_command
            ).action
            == "allow"
        )
        if not should_verify(config, root, self.ctx.changed_paths, self.verify_attempts, allowed):
            return False
        self.verify_attempts += 1
        self.ctx.changed_paths.clear()
        call_id = f"verify-{self.state.id[:8]}-{self.verify_attempts}"
        self.state.emit(ToolCallBegin(call_id=call_id, tool="bash", input={"command": command, "autoVerify": True}))
        self.state.report(f"Running: {command}")
        result = await self.session.shell.run(
            command,
            on_output=lambda chunk: self.state.emit(ShellOutput(chunk=chunk)),
            timeout=config.shell.timeout_seconds,
            max_output_bytes=config.shell.max_output_bytes,
        )
        failed = result.exit_code != 0 or result.timed_out
        self.state.emit(ToolCallEnd(call_id=call_id, output=result.output, is_error=failed))
        message = verify_message(command, result.output, result.exit_code, result.timed_out)
        self.record(Message(role="user", content=[TextBlock(text=message)]))
        return True


def engine_tools(engine: Engine) -> ToolRegistry:
    tools: ToolRegistry | None = engine.agent_tools
    if tools is None:
        from coder_ls.agent.tools import build_default_tools
        from coder_ls.engine.safety import check_command

        tools = build_default_tools(check_command=check_command)
        engine.agent_tools = tools
    return tools


def provider_for(engine: Engine, session: Session) -> tuple[Provider, str]:
    """The provider for the session's model (kept across turns), and the model name.

    Raises ProviderError (kind "config") when it cannot be built, e.g. no API key."""
    from coder_ls.llm.models import make_provider

    config = engine.config
    if session.model and session.model != config.model:
        config = msgspec.structs.replace(config, model=session.model, provider=session.provider or config.provider)
    key = (config.provider, config.model if config.model == "scripted" else "", config.scripted_file or "")
    provider = engine.providers.get(key)
    if provider is None:
        provider = make_provider(config, engine.env, engine.root)
        engine.providers[key] = provider
    return provider, config.model


async def run_turn(engine: Engine, state: SubmissionState, action: RunAgent, b: ResultBuilder) -> None:
    from coder_ls.llm.base import ProviderError

    try:
        provider, _ = provider_for(engine, state.session)
    except ProviderError as exc:
        b.fail("no_model" if exc.kind == "config" else exc.kind, exc.message)
        return
    await Turn(engine, state, b, provider).run(action)
