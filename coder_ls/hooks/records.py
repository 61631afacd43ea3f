"""The typed records of hook events and of what a hook answers.

Each event is a msgspec struct tagged by `hook_event_name` (Claude Code's field), so the
JSON a hook reads on stdin is these structs encoded at the runner's edge: field names
and shapes are Claude Code's (snake_case, `tool_input` in Claude Code's shape, see
`toolmap.py`), and a hook script written for Claude Code reads what it expects.
The session fields (`session_id`, `transcript_path`, `cwd`) are filled in by the
dispatcher (`dispatch.py`); a call site only says what happened.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from coder_ls.protocol.config import HookEventName

EVENT_NAMES: tuple[str, ...] = HookEventName.__args__  # type: ignore[attr-defined]


class HookEvent(msgspec.Struct, frozen=True, tag_field="hook_event_name", kw_only=True):
    session_id: str = ""
    transcript_path: str = ""
    cwd: str = ""
    permission_mode: str = "default"


class SessionStart(HookEvent, frozen=True, tag="SessionStart"):
    source: Literal["startup", "resume", "clear", "compact"] = "startup"


class UserPromptSubmit(HookEvent, frozen=True, tag="UserPromptSubmit"):
    prompt: str


class PreToolUse(HookEvent, frozen=True, tag="PreToolUse"):
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str = ""


class PermissionRequest(HookEvent, frozen=True, tag="PermissionRequest"):
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str = ""


class PostToolUse(HookEvent, frozen=True, tag="PostToolUse"):
    tool_name: str
    tool_input: dict[str, Any]
    tool_response: dict[str, Any]
    tool_use_id: str = ""


class PostToolUseFailure(HookEvent, frozen=True, tag="PostToolUseFailure"):
    tool_name: str
    tool_input: dict[str, Any]
    error: str
    tool_use_id: str = ""
    is_interrupt: bool = False


class Stop(HookEvent, frozen=True, tag="Stop"):
    stop_hook_active: bool = False
    last_assistant_message: str = ""


class SubagentStop(HookEvent, frozen=True, tag="SubagentStop"):
    stop_hook_active: bool = False
    agent_type: str = ""
    agent_id: str = ""
    last_assistant_message: str = ""


class PreCompact(HookEvent, frozen=True, tag="PreCompact"):
    trigger: Literal["manual", "auto"]
    custom_instructions: str = ""


SessionEndReason = Literal["clear", "logout", "prompt_input_exit", "other"]


class SessionEnd(HookEvent, frozen=True, tag="SessionEnd"):
    reason: SessionEndReason = "other"


class Notification(HookEvent, frozen=True, tag="Notification"):
    message: str
    notification_type: str = "permission_prompt"
    title: str = ""


AnyHookEvent = (
    SessionStart
    | UserPromptSubmit
    | PreToolUse
    | PermissionRequest
    | PostToolUse
    | PostToolUseFailure
    | Stop
    | SubagentStop
    | PreCompact
    | SessionEnd
    | Notification
)


def event_name(event: HookEvent) -> str:
    return type(event).__struct_config__.tag  # type: ignore[return-value]


def match_value(event: HookEvent) -> str | None:
    """What a matcher is tested against (Claude Code: the tool name for tool events, the
    source / trigger / reason / notification type for the others); None: every group runs."""
    match event:
        case PreToolUse(tool_name=t) | PermissionRequest(tool_name=t) | PostToolUse(tool_name=t):
            return t
        case PostToolUseFailure(tool_name=t):
            return t
        case SessionStart(source=s):
            return s
        case PreCompact(trigger=t):
            return t
        case SessionEnd(reason=r):
            return r
        case Notification(notification_type=n):
            return n
        case SubagentStop(agent_type=a):
            return a
    return None


# -- answers ------------------------------------------------------------------------------
Decision = Literal["allow", "deny", "ask", "block", "none"]


class Verdict(msgspec.Struct, frozen=True):
    """What the hooks of one event decided together (the strictest answer wins: deny >
    ask > allow). `blocked`: the action does not happen (a prompt, a tool call, a stop);
    `reason` goes to the model (or the user, for a prompt); `context`: text added for the
    model; `updated_input`: the tool input a PreToolUse/PermissionRequest hook replaced
    (in Claude Code's shape); `stop`: `continue: false` (the turn ends, `stop_reason`
    said to the user)."""

    decision: Decision = "none"
    blocked: bool = False
    reason: str = ""
    context: tuple[str, ...] = ()
    updated_input: dict[str, Any] | None = None
    stop: bool = False
    stop_reason: str = ""
    messages: tuple[str, ...] = ()  # `systemMessage`s and failures, for the user


NO_VERDICT = Verdict()
