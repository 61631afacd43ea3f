"""Events the engine emits; the LSP edge sends each as a `coder/event` notification.

On the wire: `{sessionId, submissionId, seq, type, ...payload}`. The engine builds
events with the payload only; the session stamps ids and `seq` when it emits them.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec


class Event(msgspec.Struct, rename="camel", tag_field="type", kw_only=True, omit_defaults=False):
    session_id: str = ""
    submission_id: str = ""
    seq: int = 0
    # A subagent's events (contract section 13): which one, and the task call that started it.
    # Left out on the wire when None (the LSP edge drops them).
    agent_id: str | None = None
    parent_call_id: str | None = None


class UserMessage(Event, tag="userMessage"):
    text: str


class AssistantDelta(Event, tag="assistantDelta"):
    text: str


class AssistantRestart(Event, tag="assistantRestart"):
    """The model's reply is starting over (the stream failed and was retried): drop the
    `assistantDelta` / `reasoningDelta` text shown since the step began."""

    reason: str


class ReasoningDelta(Event, tag="reasoningDelta"):
    text: str


class AssistantMessage(Event, tag="assistantMessage"):
    text: str


class ToolCallBegin(Event, tag="toolCallBegin"):
    call_id: str
    tool: str
    input: dict[str, Any]


class ToolCallEnd(Event, tag="toolCallEnd"):
    call_id: str
    output: str
    is_error: bool = False
    # The tool read or edited an editor buffer with unsaved changes, not the file on disk
    # (`read`, `grep`, `edit`: contract section 23).
    unsaved: bool = False


class ShellOutput(Event, tag="shellOutput"):
    chunk: str


class ShellFinished(Event, tag="shellFinished"):
    """Added to the contract: a shell command ended."""

    command: str
    exit_code: int | None
    truncated: bool = False
    timed_out: bool = False


class EditApplied(Event, tag="editApplied"):
    uri: str
    applied: bool
    reason: str | None = None
    # The server wrote the file itself (it was not open in the editor, or the client
    # cannot apply edits): the disk already holds the edit. A client must not save a copy
    # it loaded to apply the edit (reload or revert it instead): one writer per file.
    on_disk: bool = False


class ApprovalRequested(Event, tag="approvalRequested"):
    call_id: str
    tool: str
    summary: str


class ApprovalResolved(Event, tag="approvalResolved"):
    """Added to the contract: how an approval question ended."""

    call_id: str
    decision: Literal["allowOnce", "allowSession", "alwaysAllow", "deny", "cancelled"]


class TodoItem(msgspec.Struct, rename="camel"):
    content: str
    status: Literal["pending", "in_progress", "completed"] = "pending"
    id: str = ""


class TodoUpdated(Event, tag="todoUpdated"):
    todos: list[TodoItem]


class ContextUsage(Event, tag="contextUsage"):
    used_tokens: int
    limit_tokens: int


class SessionChanged(Event, tag="sessionChanged"):
    reason: Literal["new", "clear", "resume", "fork"]  # fork: edit and resend (previous: the original)
    previous_session_id: str | None = None


class ModelChanged(Event, tag="modelChanged"):
    model: str
    provider: str


class PermissionsChanged(Event, tag="permissionsChanged"):
    preset: str


class CommandsChanged(Event, tag="commandsChanged"):
    pass


class ContextCompacted(Event, tag="contextCompacted"):
    """Added to the contract: the model context was compacted. `level` "clear": old tool
    results were cleared (no model call), `summary` is the note that says so; "summary": the
    model's summary replaced the conversation. Tokens: of the conversation, before and after
    (`tokensBefore` as the last response reported it when known; `tokensAfter` estimated)."""

    summary: str
    messages_before: int
    level: Literal["clear", "summary"] = "summary"
    tokens_before: int | None = None
    tokens_after: int | None = None


class Queued(Event, tag="queued"):
    """The submission waits behind the session's running one; `position` 1 runs next."""

    position: int


class SubagentStarted(Event, tag="subagentStarted"):
    """A subagent began (its `agentId` is set, like on all its events)."""

    agent: str
    prompt: str


class SubagentUsage(msgspec.Struct, rename="camel", kw_only=True):
    input_tokens: int = 0
    output_tokens: int = 0
    steps: int = 0


class SubagentFinished(Event, tag="subagentFinished"):
    status: Literal["completed", "cancelled", "failed"]
    usage: SubagentUsage = msgspec.field(default_factory=SubagentUsage)


class TaskUpdated(Event, tag="taskUpdated"):
    """A `/task` changed (contract section 14)."""

    task_id: str
    status: str
    completed: int
    failed: int
    total: int
    percentage: int
    tokens_used: int


class TurnFinished(Event, tag="turnFinished"):
    """The last event of every submission (agent turn, shell command, slash command)."""

    status: Literal["completed", "cancelled", "failed"]


class ErrorEvent(Event, tag="error"):
    message: str


class Notice(Event, tag="notice"):
    """Added to the contract: an informational line for the transcript."""

    message: str


class HookRan(Event, tag="hookRan"):
    """A hook ran (contract: hooks): its event, a short name (its command's first line),
    what it decided (`allow`, `deny`, `ask`, `block`, `none`, `failed`) and how long it took."""

    event: str
    name: str
    decision: str
    ms: int


class PlanProposed(Event, tag="planProposed"):
    """Plan mode (contract section 22): the agent's plan, Markdown, for the user to answer
    with `coder.plan {submissionId, action}` (the submission named is this event's)."""

    plan: str


AnyEvent = (
    UserMessage
    | AssistantDelta
    | AssistantRestart
    | ReasoningDelta
    | AssistantMessage
    | ToolCallBegin
    | ToolCallEnd
    | ShellOutput
    | ShellFinished
    | EditApplied
    | ApprovalRequested
    | ApprovalResolved
    | TodoUpdated
    | ContextUsage
    | SessionChanged
    | ModelChanged
    | PermissionsChanged
    | CommandsChanged
    | ContextCompacted
    | Queued
    | SubagentStarted
    | SubagentFinished
    | TaskUpdated
    | TurnFinished
    | ErrorEvent
    | Notice
    | HookRan
    | PlanProposed
)
