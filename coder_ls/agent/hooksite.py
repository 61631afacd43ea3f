"""Where a turn meets the hooks: one call per event site, the rules kept here.

A hook can block, feed the model text, change a tool's input, or answer a permission
question, but its `allow` never widens the rules: it stands only in place of the
preset's own question (`preset <name>` asks); a deny rule, an ask rule, the
refused-command check and the protected paths keep their answer (a hook's `ask` or
`deny` may still narrow any allow). Claude Code's rule, "allow skips the prompt but not
deny or ask rules", with the protected paths added.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from coder_ls.agent.grants import Decision
from coder_ls.engine.agent_api import TurnContext
from coder_ls.hooks.dispatch import SessionHookState
from coder_ls.hooks.records import (
    Notification,
    PermissionRequest,
    PostToolUse,
    PostToolUseFailure,
    PreToolUse,
    SessionStart,
    Stop,
    SubagentStop,
    UserPromptSubmit,
    Verdict,
)
from coder_ls.hooks.settings import HookSpec
from coder_ls.hooks.toolmap import claude_name, from_claude, to_claude
from coder_ls.protocol.events import Notice
from coder_ls.protocol.messages import ToolUseBlock


class ToolGate(msgspec.Struct, frozen=True):
    """PreToolUse's answer for one call: the input to use, and the hook's say."""

    input: Any
    verdict: Verdict

    def settle(self, decision: Decision, preset: str) -> Decision:
        """The policy's decision with the hook's folded in, never widened past the rules."""
        return fold(decision, self.verdict, preset)


def fold(decision: Decision, verdict: Verdict, preset: str) -> Decision:
    hook = verdict.decision
    why = f" ({verdict.reason})" if verdict.reason else ""
    if verdict.stop and decision.action != "deny":  # `continue: false`: nothing more runs this turn
        return Decision("deny", f"a hook stopped the turn ({verdict.stop_reason or 'no reason given'})")
    if decision.action == "deny" or hook == "none":
        return decision
    if hook in ("deny", "block"):
        return Decision("deny", f"a hook denied it{why}")
    if hook == "ask" and decision.action == "allow":
        return Decision("ask", f"a hook asks{why}")
    if hook == "allow" and decision.action == "ask" and decision.reason == f"preset {preset}":
        return Decision("allow", f"a hook allowed it{why}")
    return decision  # an ask rule, a protected path, the command check's asks: the user decides


class HookSites:
    def __init__(self, turn: TurnContext, scoped: Sequence[HookSpec] = (), agent_type: str | None = None) -> None:
        self.turn, self.scoped, self.agent_type = turn, tuple(scoped), agent_type
        self.stop_active = False
        self.stopped: str | None = None  # a hook's `continue: false`: the turn ends (why)

    @property
    def root(self) -> Path:
        return self.turn.root

    async def _fire(self, event: Any) -> Verdict:
        verdict = await self.turn.hooks(event, self.scoped)
        if verdict.stop and self.stopped is None:
            self.stopped = verdict.stop_reason or "a hook ended the turn"
            self.turn.emit(Notice(message=f"A hook stopped the turn: {self.stopped}"))
        return verdict

    async def prompt(self, prompt: str) -> tuple[Verdict, str]:
        """SessionStart (a session's first prompt), then UserPromptSubmit: (the prompt's
        verdict, the context the hooks add to the message)."""
        if self.agent_type is not None:
            return Verdict(), ""
        context: list[str] = []
        state = self.turn.session.extension(SessionHookState, SessionHookState)
        if not state.started:
            state.started = True
            start = SessionStart(source="resume" if self.turn.session.context else "startup")
            context += (await self._fire(start)).context
        verdict = await self._fire(UserPromptSubmit(prompt=prompt))
        context += verdict.context
        return verdict, "".join(f"\n\n{c}" for c in context)

    async def before_tool(self, call: ToolUseBlock) -> ToolGate:
        tool_input = to_claude(call.name, call.input, self.root)
        verdict = await self._fire(
            PreToolUse(tool_name=claude_name(call.name), tool_input=tool_input, tool_use_id=call.id)
        )
        new_input = call.input
        if verdict.updated_input is not None:
            new_input = from_claude(call.name, verdict.updated_input, self.root)
        return ToolGate(new_input, verdict)

    async def permission(self, call: ToolUseBlock, tool_input: Any, decision: Decision, preset: str) -> Decision:
        """Before the user is asked: Notification, then PermissionRequest, whose allow
        stands in for the user's answer only where a hook's allow may (see `fold`)."""
        name = claude_name(call.name)
        await self._fire(Notification(message=f"Coder needs your permission to use {name}"))
        shaped = to_claude(call.name, tool_input, self.root)
        verdict = await self._fire(PermissionRequest(tool_name=name, tool_input=shaped, tool_use_id=call.id))
        return fold(decision, verdict, preset)

    async def after_tool(self, call: ToolUseBlock, tool_input: Any, text: str, is_error: bool) -> str:
        """PostToolUse or PostToolUseFailure; what the hooks tell the model is added to the result."""
        name, shaped = claude_name(call.name), to_claude(call.name, tool_input, self.root)
        if is_error:
            event: Any = PostToolUseFailure(tool_name=name, tool_input=shaped, error=text, tool_use_id=call.id)
        else:
            response = {"output": text, "success": True}
            event = PostToolUse(tool_name=name, tool_input=shaped, tool_response=response, tool_use_id=call.id)
        verdict = await self._fire(event)
        notes = [*([f"Hook feedback: {verdict.reason}"] if verdict.reason else []), *verdict.context]
        return "\n\n".join([text, *notes]) if notes else text

    async def stop(self, last_text: str) -> str | None:
        """Stop (SubagentStop in a subagent): a hook's block keeps the turn going, with its
        reason as the next instruction (`stop_hook_active` is true the next time)."""
        if self.stopped is not None:
            return None
        if self.agent_type is not None:
            event: Any = SubagentStop(
                stop_hook_active=self.stop_active, agent_type=self.agent_type, last_assistant_message=last_text
            )
        else:
            event = Stop(stop_hook_active=self.stop_active, last_assistant_message=last_text)
        verdict = await self._fire(event)
        if not verdict.blocked or self.stopped is not None:
            return None
        self.stop_active = True
        return verdict.reason or "A hook asked you to continue."
