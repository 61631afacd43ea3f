"""One tool call, start to end: the one order every call of a turn (and a subagent's) takes.

    parse the model's input into the tool's typed struct (an error is the tool's result:
    nothing is asked, no hook runs)
    -> PreToolUse hooks (they may change the input: it is parsed again)
    -> the policy decides on the typed value (a bash call learns whether a sandbox runs it)
    -> the hooks' say folded in, never past the rules
    -> ask (PermissionRequest hooks first; an edit the editor reviews is its own question)
    -> run (the sandbox is inside the bash tool; its offer to run outside is its own)
    -> PostToolUse / PostToolUseFailure hooks.

codex's tool orchestrator (approval -> sandbox -> run) and pi-mono's `prepareToolCall`
(validate, then `beforeToolCall`) are the models. The turn gives a `ToolCalls` what it
owns (the tools, the hooks, the configuration as it is now, where "Always allow" is kept);
the pipeline owns the order and the refused-command check's memo.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from coder_ls.agent.editpreview import question_diff, review_call
from coder_ls.agent.grants import Decision, SandboxView
from coder_ls.agent.paths import call_paths
from coder_ls.agent.tools.base import ToolContext, ToolError, ToolOutput, ToolRegistry
from coder_ls.protocol.actions import ToolGrant
from coder_ls.protocol.config import Config, Rule
from coder_ls.protocol.events import ToolCallBegin, ToolCallEnd
from coder_ls.protocol.messages import ImageBlock, ToolResultBlock, ToolUseBlock

if TYPE_CHECKING:
    from coder_ls.agent.hooksite import ToolGate


class ToolHooks(Protocol):
    """The hook sites a tool call passes (`agent/hooksite.py` `HookSites`; a fake in tests)."""

    async def before_tool(self, call: ToolUseBlock) -> ToolGate: ...

    async def permission(self, call: ToolUseBlock, tool_input: Any, decision: Decision, preset: str) -> Decision: ...

    async def after_tool(self, call: ToolUseBlock, tool_input: Any, text: str, is_error: bool) -> str: ...


SHELL_TOOLS = frozenset({"bash"})  # the tools a sandbox runs (the policy's SHELL_TOOLS)


class ToolCalls:
    """The pipeline of one turn's tool calls."""

    def __init__(
        self,
        ctx: ToolContext,
        tools: ToolRegistry,
        hooks: ToolHooks,
        *,
        config: Callable[[], Config],
        persist_rule: Callable[[Rule], None],
        turn_grants: Callable[[], Collection[ToolGrant]] = tuple,
    ) -> None:
        self.ctx, self.tools, self.hooks = ctx, tools, hooks
        self._config, self._persist, self._turn_grants = config, persist_rule, turn_grants
        self._checked: tuple[str, Path, str | None] | None = None  # the policy's last command check
        self._unsaved = False  # the running call's tool saw an unsaved editor buffer

    # --- the order ------------------------------------------------------------------------

    async def run(self, call: ToolUseBlock) -> ToolResultBlock:
        ctx = self.ctx
        ctx.emit(ToolCallBegin(call_id=call.id, tool=call.name, input=call.input))
        await ctx.host.fetch_documents(call_paths(call.input, ctx.root))
        ctx.call_id = call.id
        self._checked = None
        self._unsaved = False
        text, is_error, images = await self._call(call)
        ctx.emit(ToolCallEnd(call_id=call.id, output=text, is_error=is_error, unsaved=self._unsaved))
        return ToolResultBlock(tool_use_id=call.id, content=text, is_error=is_error, images=images)

    async def _call(self, call: ToolUseBlock) -> tuple[str, bool, list[ImageBlock]]:
        tool = self.tools.get(call.name)
        if tool is None:
            return f"Unknown tool {call.name!r}. Tools: {', '.join(self.tools.names())}.", True, []
        try:
            typed = tool.parse(call.input)  # before anyone judges it: an error is the result
        except ToolError as exc:
            return str(exc), True, []
        gate = await self.hooks.before_tool(call)  # PreToolUse: may change the input, never widen the rules
        raw = gate.input
        if raw is not call.input:
            try:
                typed = tool.parse(raw)
            except ToolError as exc:
                return f"{exc} (after a PreToolUse hook changed the input)", True, []
        config = self._config()
        decision = gate.settle(self.decide(call.name, typed, config), config.permissions)
        ctx = self.ctx
        reviewed = decision.action == "ask" and review_call(ctx, call.name, typed)
        if decision.action == "ask" and not reviewed:
            decision = await self.hooks.permission(call, raw, decision, config.permissions)
        if decision.action == "deny":
            return f"Not allowed: {decision.reason}", True, []
        if decision.action == "ask" and reviewed:
            ctx.review_edit = call.name  # the edit itself is the question (section 15)
        elif decision.action == "ask":
            refused = await self.ask(call, typed, decision)
            if refused is not None:
                return refused, True, []
        ctx.config = self._config()
        if decision.action == "allow" and self._checked is not None and self._checked[2] is None:
            ctx.checked = self._checked[:2]  # no question was awaited: nothing ran since
        ctx.sandbox_required = decision.sandbox == "sandboxed"
        try:
            output: ToolOutput = await tool.run(ctx, typed)
        finally:
            ctx.review_edit = None
            ctx.checked = None
            ctx.sandbox_required = False
        self._unsaved = output.unsaved
        text = await self.hooks.after_tool(call, raw, output.text, output.is_error)
        return text, output.is_error, list(output.images)

    # --- the policy and the question ----------------------------------------------------------

    def decide(self, tool: str, typed: Any, config: Config) -> Decision:
        # the policy and its shell parser: imported by the first tool call, not the first request
        from coder_ls.agent.policy import decide

        ctx = self.ctx
        view: SandboxView | None = None
        cwd: Path | None = None
        if tool in SHELL_TOOLS and config.permissions in ("balanced", "auto-edit", "plan"):  # where it may matter
            from coder_ls.agent.tools.bash import sandbox_view

            view = sandbox_view(ctx.shell, config, ctx.host)
            cwd = getattr(ctx.shell, "cwd", None)
        return decide(
            tool,
            typed,
            config,
            ctx.grants,
            root=ctx.root,
            check_command=self.check_in_cwd,
            turn_grants=self._turn_grants(),
            skill_dirs=ctx.skill_dirs(),
            sandbox=view,
            cwd=cwd,
        )

    async def ask(self, call: ToolUseBlock, typed: Any, decision: Decision) -> str | None:
        """The user's question; None when allowed, else what the model is told."""
        from coder_ls.agent.policy import approve, describe_call

        ctx = self.ctx
        summary = describe_call(call.name, typed, ctx.root)
        detail = question_diff(ctx, call.name, typed)
        if decision.sandbox and decision.sandbox != "sandboxed":
            detail = f"(Asked because {decision.sandbox}.)" + (f"\n{detail}" if detail else "")
        answer = await approve(ctx, call.name, typed, summary, self.persist_rule, call_id=call.id, detail=detail)
        return None if answer.allowed else answer.message

    def persist_rule(self, rule: Rule) -> None:
        self._persist(rule)
        self.ctx.config = self._config()

    def check_in_cwd(self, command: str, root: Path) -> str | None:
        """The refused-command check, with relative paths taken from the shell's cwd
        (remembered: the bash tool does not check the same command again unless something
        could have changed in between)."""
        from coder_ls.guard.safety import check_command  # the shell parser: once a command is called

        shell = self.ctx.shell
        cwd = getattr(shell, "cwd", None) or root
        exports = getattr(shell, "exports", None)
        result = check_command(command, root, cwd=cwd, env=exports() if exports is not None else None)
        self._checked = (command, cwd, result)
        return result
