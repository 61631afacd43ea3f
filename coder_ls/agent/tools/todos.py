"""todoRead and todoWrite: the session's task list."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from coder_ls.agent.tools.base import Tool, ToolContext, ToolOutput
from coder_ls.protocol.events import TodoItem, TodoUpdated

_MARK = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}


class TodoInput(msgspec.Struct, rename="camel", forbid_unknown_fields=True, frozen=True):
    content: Annotated[str, msgspec.Meta(min_length=1)]
    status: Literal["pending", "in_progress", "completed"] = "pending"
    id: str | None = None


class TodoWriteInput(msgspec.Struct, rename="camel", forbid_unknown_fields=True, frozen=True):
    """Replace the task list."""

    todos: Annotated[list[TodoInput], msgspec.Meta(description="The whole new list, in order")]


class TodoReadInput(msgspec.Struct, rename="camel", forbid_unknown_fields=True, frozen=True):
    """Show the task list."""


def format_todos(todos: list[TodoItem]) -> str:
    if not todos:
        return "The task list is empty."
    return "\n".join(f"{_MARK.get(t.status, '[ ]')} {t.id}. {t.content}" for t in todos)


def make_todo_read_tool() -> Tool[TodoReadInput]:
    async def run(ctx: ToolContext, inp: TodoReadInput) -> ToolOutput:
        return ToolOutput(format_todos(ctx.todos))

    return Tool("todoRead", "Show the current task list.", TodoReadInput, run)


def make_todo_write_tool() -> Tool[TodoWriteInput]:
    async def run(ctx: ToolContext, inp: TodoWriteInput) -> ToolOutput:
        items: list[TodoItem] = []
        used = {t.id for t in inp.todos if t.id}
        counter = 0
        for t in inp.todos:
            ident = t.id
            if not ident:
                counter += 1
                while str(counter) in used:
                    counter += 1
                ident = str(counter)
                used.add(ident)
            items.append(TodoItem(content=t.content, status=t.status, id=ident))
        ctx.todos[:] = items
        ctx.emit(TodoUpdated(todos=list(items)))
        done = sum(1 for t in items if t.status == "completed")
        note = ""
        if sum(1 for t in items if t.status == "in_progress") > 1:
            note = "\nNote: more than one task is in_progress; keep one at a time."
        # No echo of the list: the model has just written it (todoRead shows it).
        return ToolOutput(f"Task list updated ({done}/{len(items)} done).{note}")

    return Tool(
        "todoWrite",
        "Replace the task list for multi-step work: each todo has content and a status "
        "(pending, in_progress, completed). Keep exactly one task in_progress while working.",
        TodoWriteInput,
        run,
    )
