"""The agent's tools. `build_default_tools()` gives the registry a turn uses."""

from __future__ import annotations

from coder_ls.agent.tools.ask import make_ask_tool
from coder_ls.agent.tools.base import (
    ShellLike,
    ShellResultLike,
    Tool,
    ToolContext,
    ToolError,
    ToolOutput,
    ToolRegistry,
    ToolSpec,
)
from coder_ls.agent.tools.bash import CommandCheck, make_bash_tool, make_shell_kill_tool, make_shell_output_tool
from coder_ls.agent.tools.files import make_edit_tool, make_multi_edit_tool, make_read_tool, make_write_tool
from coder_ls.agent.tools.search import FindRg, make_glob_tool, make_grep_tool, make_ls_tool
from coder_ls.agent.tools.todos import make_todo_read_tool, make_todo_write_tool
from coder_ls.agent.tools.web import make_web_fetch_tool

__all__ = [
    "ShellLike",
    "ShellResultLike",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolOutput",
    "ToolRegistry",
    "ToolSpec",
    "build_default_tools",
]


def build_default_tools(
    *,
    check_command: CommandCheck | None = None,
    find_rg: FindRg | None = None,
) -> ToolRegistry:
    """read, write, edit, multiEdit, bash, shell_output, shell_kill, grep, glob, ls, todoRead,
    todoWrite, ask_user, web_fetch (dropped from a turn's set by a deny rule, `agent/runner.py`)."""
    grep = make_grep_tool(find_rg) if find_rg is not None else make_grep_tool()
    return ToolRegistry(
        [
            make_read_tool(),
            make_write_tool(),
            make_edit_tool(),
            make_multi_edit_tool(),
            make_bash_tool(check_command),
            make_shell_output_tool(),
            make_shell_kill_tool(),
            grep,
            make_glob_tool(),
            make_ls_tool(),
            make_todo_read_tool(),
            make_todo_write_tool(),
            make_ask_tool(),
            make_web_fetch_tool(),
        ]
    )
