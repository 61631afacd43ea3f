"""The bash tool: a command in the session's persistent shell, with the configured caps."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import msgspec

from coder_ls.agent.tools.base import ShellResultLike, Tool, ToolContext, ToolError, ToolOutput
from coder_ls.protocol.events import ShellFinished, ShellOutput

CommandCheck = Callable[[str, Path], "str | None"]


class BashInput(msgspec.Struct, rename="camel", forbid_unknown_fields=True, frozen=True):
    """Run a shell command."""

    command: Annotated[str, msgspec.Meta(min_length=1, description="The command line to run")]
    timeout: (
        Annotated[
            float,
            msgspec.Meta(gt=0, description="Seconds before the command is stopped (capped by configuration)"),
        ]
        | None
    ) = None


def default_check(command: str, root: Path) -> str | None:
    from coder_ls.engine.safety import check_command

    result: str | None = check_command(command, root)
    return result


def _short(command: str, width: int = 80) -> str:
    line = command.strip().splitlines()[0] if command.strip() else command
    return line if len(line) <= width and "\n" not in command.strip() else line[:width] + "…"


def format_result(result: ShellResultLike, timeout: float) -> str:
    parts = [result.output.rstrip("\n") or "(no output)"]
    if result.truncated:
        parts.append("[output truncated]")
    if result.timed_out:
        parts.append(f"[timed out after {timeout:g} s; the command was stopped]")
    else:
        parts.append(f"[exit code: {result.exit_code}]")
    return "\n".join(parts)


def make_bash_tool(check_command: CommandCheck | None = None) -> Tool[BashInput]:
    """`check_command(command, root)` refuses dangerous commands (default: engine.safety)."""

    async def run(ctx: ToolContext, inp: BashInput) -> ToolOutput:
        command = inp.command
        if not command.strip():
            raise ToolError("the command is empty")
        refusal = (check_command or default_check)(command, ctx.root)
        if refusal:
            raise ToolError(f"refused to run `{_short(command)}`: {refusal}")
        if ctx.shell is None:
            raise ToolError("no shell is available in this session")
        cap = ctx.config.shell.timeout_seconds
        timeout = min(inp.timeout, cap) if inp.timeout else cap
        ctx.report(f"Running: {_short(command)}")

        def on_output(chunk: str) -> None:
            ctx.emit(ShellOutput(chunk=chunk))

        pending = ctx.shell.run(
            command,
            on_output=on_output,
            timeout=timeout,
            max_output_bytes=ctx.config.shell.max_output_bytes,
        )
        result: ShellResultLike = await pending if inspect.isawaitable(pending) else pending
        ctx.emit(
            ShellFinished(
                command=command,
                exit_code=result.exit_code,
                truncated=result.truncated,
                timed_out=result.timed_out,
            )
        )
        return ToolOutput(format_result(result, timeout), is_error=result.timed_out)

    return Tool(
        "bash",
        "Run a command in the session's persistent shell (bash): the working directory and "
        "exported variables carry over between calls. Output is capped; long-running commands "
        "are stopped at the timeout. Dangerous commands are refused.",
        BashInput,
        run,
    )
