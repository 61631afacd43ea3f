"""The engine's events as ACP `session/update`s: one flat `match`, per-session state kept here.

The engine emits the same typed events to both edges (`protocol/events.py`); over LSP they
go out as `coder/event`, over ACP this module turns them into what an ACP client shows:
message and thought chunks, tool calls with a kind, locations and (for edits) a diff, the
plan (the todo list and the `/task`s), the mode. A subagent's tool calls are tool calls of
their own, their `_meta` naming the `task` call that started them (`parentToolCallId`):
ACP has no nesting, so a client that ignores `_meta` still shows them in order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from acp import helpers
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    CurrentModeUpdate,
    PlanEntry,
    PlanEntryStatus,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolKind,
    UnstructuredCommandInput,
    UserMessageChunk,
)

from coder_ls.protocol.events import (
    AssistantDelta,
    AssistantMessage,
    AssistantRestart,
    ContextCompacted,
    ErrorEvent,
    Event,
    HookRan,
    Notice,
    PermissionsChanged,
    ReasoningDelta,
    ShellFinished,
    ShellOutput,
    SubagentFinished,
    SubagentStarted,
    TaskUpdated,
    TodoUpdated,
    ToolCallBegin,
    ToolCallEnd,
)
from coder_ls.protocol.results import CommandInfo, HistoryItem

Update = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | AvailableCommandsUpdate
    | CurrentModeUpdate
)

OUTPUT_CAP = 16_000  # characters of a tool's output or a shell's shown in its tool call

# The agent's tools (agent/tools/) and what an ACP client should call them.
KINDS: dict[str, ToolKind] = {
    "read": "read",
    "ls": "read",
    "todoRead": "read",
    "write": "edit",
    "edit": "edit",
    "multiEdit": "edit",
    "bash": "execute",
    "shell_output": "read",
    "shell_kill": "execute",
    "grep": "search",
    "glob": "search",
    "todoWrite": "think",
    "task": "think",
    "web_fetch": "fetch",
}
PATH_KEYS = ("path", "file_path", "filePath")


def tool_kind(tool: str) -> ToolKind:
    return KINDS.get(tool, "other")


def _path_of(tool_input: dict[str, Any], root: str) -> str | None:
    for key in PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return value if value.startswith("/") else f"{root.rstrip('/')}/{value}"
    return None


def tool_title(tool: str, tool_input: dict[str, Any]) -> str:
    """What the call does, in a line: `bash: ls -la`, `edit: app.py`, `grep: TODO`."""
    for key in ("command", *PATH_KEYS, "pattern", "description", "prompt"):
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            line = value.strip().splitlines()[0]
            return f"{tool}: {line[:120]}"
    return tool


def _cap(text: str) -> str:
    if len(text) <= OUTPUT_CAP:
        return text
    return text[:OUTPUT_CAP] + f"\n… [{len(text) - OUTPUT_CAP} more characters]"


@dataclass
class Diff:
    path: str
    old_text: str | None
    new_text: str


@dataclass
class OpenCall:
    tool: str
    kind: ToolKind
    path: str | None = None
    before: str | None = None  # an edit's file before it (None: did not exist)
    diffs: list[Diff] = field(default_factory=list)  # what went through `fs/write_text_file`
    subagent_text: str = ""


@dataclass
class SessionView:
    """What one ACP session has been shown: open tool calls, the plan, the shell output."""

    root: str
    read: Callable[[str], str | None] = lambda path: None  # a file's text now (None: none)
    calls: dict[str, OpenCall] = field(default_factory=dict)
    todos: list[PlanEntry] = field(default_factory=list)
    tasks: dict[str, PlanEntry] = field(default_factory=dict)
    streamed: bool = False  # assistant text went out as deltas since the last full message
    shell: dict[str, str] = field(default_factory=dict)  # submission id -> output so far
    approval: tuple[str, str, str] | None = None  # (tool call id, tool, summary) being asked about

    def last_edit_call(self) -> OpenCall | None:
        for call in reversed(self.calls.values()):
            if call.kind == "edit":
                return call
        return None


def call_id_of(event: Event, call_id: str) -> str:
    """A subagent's call ids are the model's, unique only within that subagent."""
    return f"{event.agent_id}/{call_id}" if event.agent_id else call_id


def _meta(event: Event) -> dict[str, Any] | None:
    if event.agent_id is None:
        return None
    return {"coder": {"agentId": event.agent_id, "parentToolCallId": event.parent_call_id}}


def _plan(view: SessionView) -> AgentPlanUpdate:
    return helpers.update_plan([*view.todos, *view.tasks.values()])


def commands_update(catalog: list[CommandInfo]) -> AvailableCommandsUpdate:
    """The command catalog (`/help`'s) as ACP's available commands."""
    return helpers.update_available_commands(
        AvailableCommand(
            name=c.name,
            description=c.description,
            input=AvailableCommandInput(root=UnstructuredCommandInput(hint=c.argument_hint))
            if c.argument_hint
            else None,
        )
        for c in catalog
    )


def history_updates(history: list[HistoryItem]) -> list[Update]:
    """A loaded session's transcript, replayed as ACP asks of `session/load`."""
    out: list[Update] = []
    for item in history:
        text = item.text
        if item.tools:
            text = (text + "\n" if text else "") + "(tools: " + ", ".join(item.tools) + ")"
        if item.role == "user":
            out.append(helpers.update_user_message_text(text))
        else:
            out.append(helpers.update_agent_message_text(text))
    return out


def translate(event: Event, view: SessionView, on_subagent_text: Callable[[str], None] | None = None) -> list[Update]:
    """The updates an event becomes (often none: the client already knows, or ACP has no place)."""
    match event:
        case AssistantDelta(text=text) if event.agent_id is None:
            view.streamed = True
            return [helpers.update_agent_message_text(text)]
        case AssistantMessage(text=text) if event.agent_id is None:
            streamed, view.streamed = view.streamed, False
            return [] if streamed or not text else [helpers.update_agent_message_text(text)]
        case AssistantMessage(text=text) | AssistantDelta(text=text):  # a subagent's: in its task call
            return _subagent_text(event, view, text if isinstance(event, AssistantMessage) else "")
        case AssistantRestart(reason=reason):
            return [helpers.update_agent_message_text(f"\n[the reply starts over: {reason}]\n")]
        case ReasoningDelta(text=text) if event.agent_id is None:
            return [helpers.update_agent_thought_text(text)]
        case ToolCallBegin(call_id=cid, tool=tool, input=tool_input):
            acp_id = call_id_of(event, cid)
            kind = tool_kind(tool)
            path = _path_of(tool_input, view.root)
            before = view.read(path) if kind == "edit" and path else None
            view.calls[acp_id] = OpenCall(tool=tool, kind=kind, path=path, before=before)
            start = helpers.start_tool_call(
                acp_id,
                tool_title(tool, tool_input),
                kind=kind,
                status="in_progress",
                locations=[ToolCallLocation(path=path)] if path else None,
                raw_input=tool_input,
            )
            start.field_meta = _meta(event)
            return [start]
        case ToolCallEnd(call_id=cid, output=output, is_error=is_error):
            acp_id = call_id_of(event, cid)
            call = view.calls.pop(acp_id, None)
            content: list[Any] = [helpers.tool_diff_content(d.path, d.new_text, d.old_text) for d in _diffs(call, view)]
            if output:
                content.append(helpers.tool_content(helpers.text_block(_cap(output))))
            end = helpers.update_tool_call(
                acp_id, status="failed" if is_error else "completed", content=content, raw_output=_cap(output)
            )
            end.field_meta = _meta(event)
            return [end]
        case ShellOutput(chunk=chunk) if event.agent_id is None:
            sid = event.submission_id
            first = sid not in view.shell
            view.shell[sid] = view.shell.get(sid, "") + chunk
            body = [helpers.tool_content(helpers.text_block(_cap(view.shell[sid])))]
            if first:
                return [
                    helpers.start_tool_call(f"shell-{sid}", "shell", kind="execute", status="in_progress", content=body)
                ]
            return [helpers.update_tool_call(f"shell-{sid}", content=body)]
        case ShellFinished(command=command, exit_code=code, timed_out=timed_out) if event.agent_id is None:
            sid = event.submission_id
            shown = view.shell.pop(sid) if sid in view.shell else None
            failed = timed_out or code != 0
            tail = "[timed out]" if timed_out else f"[exit code: {code}]"
            body = [helpers.tool_content(helpers.text_block(_cap((shown or "") + tail)))]
            done = helpers.update_tool_call(
                f"shell-{sid}", title=f"!{command}", status="failed" if failed else "completed", content=body
            )
            if shown is None:  # no output: the call starts and ends here
                return [
                    helpers.start_tool_call(f"shell-{sid}", f"!{command}", kind="execute", status="in_progress"),
                    done,
                ]
            return [done]
        case TodoUpdated(todos=todos):
            view.todos = [helpers.plan_entry(t.content, status=t.status) for t in todos]
            return [_plan(view)]
        case TaskUpdated(task_id=task_id, status=status, completed=done, total=total, percentage=pct):
            state: PlanEntryStatus = "completed" if status in ("completed", "failed", "cancelled") else "in_progress"
            line = f"/task {task_id}: {status}, {done}/{total} steps ({pct}%)"
            view.tasks[task_id] = helpers.plan_entry(line, priority="high", status=state)
            return [_plan(view)]
        case PermissionsChanged(preset=preset):
            return [helpers.update_current_mode(preset)]
        case SubagentStarted(agent=agent, prompt=prompt) if event.parent_call_id:
            return _subagent_text(event, view, f"[{agent} started] {prompt.splitlines()[0][:200] if prompt else ''}\n")
        case SubagentFinished(status=status) if event.parent_call_id:
            return _subagent_text(event, view, f"\n[subagent {status}]")
        case ContextCompacted(messages_before=n):
            return [helpers.update_agent_message_text(f"\n[context compacted: {n} messages summarised]\n")]
        case ErrorEvent(message=message):
            return [helpers.update_agent_message_text(f"\nError: {message}\n")]
        case Notice(message=message):
            return [helpers.update_agent_message_text(f"\n{message}\n")]
        case HookRan(event=hook_event, name=name, decision=decision, ms=ms) if decision in ("deny", "block", "failed"):
            # what changed the course of the turn is said; hooks that let things pass stay quiet
            return [helpers.update_agent_thought_text(f"[hook {hook_event} {name}: {decision}, {ms} ms]\n")]
    return []


def _diffs(call: OpenCall | None, view: SessionView) -> list[Diff]:
    """An edit's diff: what went to the editor, else the file before and after the call."""
    if call is None or call.kind != "edit":
        return []
    if call.diffs or call.path is None:
        return call.diffs
    after = view.read(call.path)
    if after is None or after == call.before:
        return []
    return [Diff(call.path, call.before, after)]


def _subagent_text(event: Event, view: SessionView, text: str) -> list[Update]:
    """A subagent's progress shown in the content of the `task` call that runs it."""
    parent = event.parent_call_id
    if not parent or not text:
        return []
    call = view.calls.get(parent)
    if call is None:
        return []
    call.subagent_text = (call.subagent_text + text)[-OUTPUT_CAP:]
    return [helpers.update_tool_call(parent, content=[helpers.tool_content(helpers.text_block(call.subagent_text))])]
