"""The bash tool: a command in the session's agent shell (`engine/agentshell.py`: one
persistent sandboxed bash per session, apart from the user's `!` shell), with the
configured caps.

It also tells the policy whether a sandbox will run a call (`sandbox_view`), and after a
sandboxed run reads what the sandbox stopped (`guard/walls.py`): the user may then let that
exact command run again outside the sandbox, a question that names what was stopped and is
never asked for a protected path.

`background: true` starts the command as a background shell instead (contract section 22):
the policy decided on it exactly as on the same command in the foreground, the
refused-command check ran; it answers at once with the id. `shell_output {shellId, since?}`
reads what it printed since, `shell_kill {shellId}` ends it. The processes belong to the
session's agent shell (`AgentShell.start_background`, `engine/bgshells.py`, which puts them
in the same sandbox): these tools only speak to it. A background command never runs outside
the sandbox: nothing is offered when the sandbox stops it."""

from __future__ import annotations

import contextlib
import inspect
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import msgspec

from coder_ls.agent.grants import SandboxView
from coder_ls.agent.tools.base import ShellResultLike, Tool, ToolContext, ToolError, ToolOutput
from coder_ls.engine.host import Host
from coder_ls.guard import sandbox as sbx
from coder_ls.guard import walls
from coder_ls.protocol.config import Config
from coder_ls.protocol.events import ApprovalRequested, ApprovalResolved, ShellFinished, ShellOutput

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
    background: Annotated[bool, msgspec.Meta(description="Return a shellId at once; see shell_output")] | None = None


RUN_OUTSIDE = "Run outside the sandbox"
KEEP = "Keep the failure"
NO_SANDBOX_WARNING = (
    "coder: no OS sandbox is available on this machine (bubblewrap does not work here); "
    "the agent's shell commands run unsandboxed, guarded only by the permission policy."
)


def default_check(command: str, root: Path, cwd: Path | None = None) -> str | None:
    from coder_ls.guard.safety import check_command

    result: str | None = check_command(command, root, cwd=cwd)
    return result


def warn_no_sandbox_once(host: Host) -> None:
    """One `window/showMessage` warning per server (the host is the server's)."""
    if getattr(host, "_coder_no_sandbox_warned", False):
        return
    with contextlib.suppress(AttributeError):
        host._coder_no_sandbox_warned = True  # type: ignore[attr-defined]
    host.show_message("warning", NO_SANDBOX_WARNING)


def sandbox_options(shell: Any, config: Config, host: Host) -> dict[str, Any]:
    """`run` keywords for the agent's shell: secrets hidden, the sandbox (real shell only)."""
    sandbox_for = getattr(shell, "sandbox_for", None)
    if sandbox_for is None:
        return {}
    box = sandbox_for(config.sandbox)
    if box is None and config.sandbox.mode != "off":
        warn_no_sandbox_once(host)
    return {"hide_env": config.secrets.env_names, "box": box}


def view_of(box: sbx.Sandbox, config: Config) -> SandboxView:
    """The policy's view of a resolved sandbox: where its commands may write, what network."""
    tops = [box.root, *box.writable] if box.mode == "workspace-write" else []
    tops += ["/tmp" if box.backend == "bwrap" else box.tmp, box.cache]
    network: Any = config.sandbox.network
    allowed: tuple[str, ...] = ()
    denied: tuple[str, ...] = ()
    if network is True:
        kind = "all"
    elif not network:
        kind = "none"
    else:  # domain rules: only through the server's proxy, which Landlock cannot give
        allowed = tuple(getattr(network, "allowed_domains", ()) or ())
        denied = tuple(getattr(network, "denied_domains", ()) or ())
        kind = "domains" if box.backend == "bwrap" else "none"
    return SandboxView(
        True,
        backend=box.backend,
        mode=box.mode,
        writable=tuple(os.path.realpath(t) for t in tops),
        network=kind,  # type: ignore[arg-type]
        allowed_domains=allowed,
        denied_domains=denied,
    )


def sandbox_view(shell: Any, config: Config, host: Host) -> SandboxView | None:
    """Whether a sandbox will run the session's next shell call, for the policy (None: a
    shell that says nothing about sandboxes, as in unit tests)."""
    sandbox_for = getattr(shell, "sandbox_for", None)
    if sandbox_for is None:
        return None
    box = sandbox_for(config.sandbox)
    if box is not None:
        return view_of(box, config)
    if config.sandbox.mode == "off":
        return SandboxView(False, "the sandbox is off (sandbox.mode)")
    warn_no_sandbox_once(host)
    return SandboxView(False, "no sandbox works on this machine")


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


def outside_question(command: str, what: walls.Stopped, *, unasked: bool) -> str:
    """The offer to run outside: what the sandbox stopped, and exactly what will run."""
    lines = [f"The sandbox stopped `{_short(command, 200)}`: {what.named()}."]
    if unasked:
        lines.append("It ran in the sandbox without a question (sandbox.autoAllow).")
    lines.append("Run this exact command again outside the sandbox, with your own permissions, files and network?")
    if _short(command, 200) != command.strip():
        lines.append(command if len(command) <= 4000 else command[:4000] + "\n… (cut here; the whole command runs)")
    return "\n".join(lines)


async def ask_outside(ctx: ToolContext, command: str, what: walls.Stopped) -> bool:
    """May this exact command, which failed on the sandbox, run again outside it?"""
    summary = f"run `{_short(command, 200)}` again outside the sandbox"
    ctx.emit(ApprovalRequested(call_id=ctx.call_id, tool="bash", summary=summary))
    message = outside_question(command, what, unasked=ctx.sandbox_required)
    choice = await ctx.host.ask("warning", message, [RUN_OUTSIDE, KEEP])
    ok = choice == RUN_OUTSIDE
    ctx.emit(ApprovalResolved(call_id=ctx.call_id, decision="allowOnce" if ok else "deny"))
    return ok


def _refused(ctx: ToolContext, result: ShellResultLike, mark: int | None) -> tuple[str, ...]:
    """The domains the network proxy refused this command (the shell's log since `mark`)."""
    refused = getattr(ctx.shell, "refused_domains", None)
    logged = refused(mark) if refused is not None else []
    return tuple(dict.fromkeys((*logged, *(getattr(result, "refused_domains", ()) or ()))))


def _stopped(
    ctx: ToolContext, command: str, result: ShellResultLike, box: sbx.Sandbox, before: Any, mark: int | None
) -> walls.Stopped:
    refused = _refused(ctx, result, mark)
    if not walls.clues(result.output, refused):
        return walls.Stopped()
    view = view_of(box, ctx.config)
    after = getattr(ctx.shell, "cwd", None)
    cwds = [Path(c) for c in dict.fromkeys((before, after)) if c is not None] or [ctx.root]
    return walls.stopped(
        command,
        result.output,
        result.exit_code,
        root=ctx.root,
        cwds=cwds,
        writable=view.writable,
        backend=view.backend,
        network=view.network,
        refused_domains=refused,
    )


def make_bash_tool(check_command: CommandCheck | None = None) -> Tool[BashInput]:
    """`check_command(command, root)` refuses dangerous commands (default: guard.safety)."""

    async def run(ctx: ToolContext, inp: BashInput) -> ToolOutput:
        command = inp.command
        if not command.strip():
            raise ToolError("the command is empty")
        cwd = getattr(ctx.shell, "cwd", None)
        if ctx.checked == (command, cwd):
            refusal = None  # the turn's policy checked this very command in this cwd a moment ago
        elif check_command is not None:
            refusal = check_command(command, ctx.root)
        else:  # relative paths in the command are relative to the shell's cwd
            refusal = default_check(command, ctx.root, cwd)
        if refusal:
            raise ToolError(f"refused to run `{_short(command)}`: {refusal}")
        if ctx.shell is None:
            raise ToolError("no shell is available in this session")
        if inp.background:
            return await start_background(ctx, command, sandbox_options(ctx.shell, ctx.config, ctx.host))
        cap = ctx.config.shell.timeout_seconds
        timeout = min(inp.timeout, cap) if inp.timeout else cap
        ctx.report(f"Running: {_short(command)}")

        def on_output(chunk: str) -> None:
            ctx.emit(ShellOutput(chunk=chunk))

        async def run_once(options: dict[str, Any], *, outside: bool = False) -> ShellResultLike:
            assert ctx.shell is not None
            # Outside the sandbox: a one-off shell, never the agent's sandboxed one.
            outside_run = getattr(ctx.shell, "run_outside", None) if outside else None
            shell_run: Callable[..., Any] = outside_run if outside_run is not None else ctx.shell.run
            pending = shell_run(
                command,
                on_output=on_output,
                timeout=timeout,
                max_output_bytes=ctx.config.shell.max_output_bytes,
                **options,
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
            return result

        options = sandbox_options(ctx.shell, ctx.config, ctx.host)
        box = options.get("box")
        if ctx.sandbox_required and box is None:
            raise ToolError(
                f"refused to run `{_short(command)}`: it was allowed without a question only to run in the "
                "sandbox (sandbox.autoAllow), and no sandbox runs it now"
            )
        network_mark = getattr(ctx.shell, "network_mark", None)
        mark = network_mark() if network_mark is not None else None
        result = await run_once(options)
        text = format_result(result, timeout)
        what = _stopped(ctx, command, result, box, cwd, mark) if box is not None else walls.Stopped()
        if what.protected:
            text += (
                f"\n[the sandbox stopped it: {what.named()}. Running it outside the sandbox is not offered "
                "for a protected path; write it with the file tools, which ask the user, or leave it]"
            )
        elif what.offer and ctx.config.permissions == "plan":  # never outside the sandbox while planning
            text += f"\n[it failed inside the sandbox ({what.named()}); plan mode does not run commands outside it]"
        elif what.offer:
            if await ask_outside(ctx, command, what):
                ctx.report(f"Running outside the sandbox: {_short(command)}")
                result = await run_once({k: v for k, v in options.items() if k != "box"}, outside=True)
                text += "\n[the user approved running it again outside the sandbox:]\n" + format_result(result, timeout)
            else:
                text += (
                    f"\n[it failed inside the sandbox ({what.named()}; {sbx.WALLS}); "
                    "the user did not approve running it outside]"
                )
        return ToolOutput(text, is_error=result.timed_out)

    return Tool(
        "bash",
        "Run a command in the session's persistent shell (bash): the working directory and "
        "exported variables carry over between calls. Output is capped; long-running commands "
        "are stopped at the timeout. Dangerous commands are refused.",
        BashInput,
        run,
    )


# --- background shells (contract section 22) ------------------------------------------------

ShellId = Annotated[str, msgspec.Meta(description="From bash background")]
Since = Annotated[int, msgspec.Meta(ge=0, description="Byte offset (default: where the last read ended)")]


# No docstrings on the inputs: they would be sent as the schemas' descriptions, every request.
class ShellOutputInput(msgspec.Struct, rename="camel", forbid_unknown_fields=True, frozen=True):
    shell_id: ShellId
    since: Since | None = None


class ShellKillInput(msgspec.Struct, rename="camel", forbid_unknown_fields=True, frozen=True):
    shell_id: ShellId


def _shells(ctx: ToolContext) -> Any:
    background = getattr(ctx.shell, "background", None)
    if background is None:
        raise ToolError("background shells are not available in this session")
    return background


async def start_background(ctx: ToolContext, command: str, options: dict[str, Any]) -> ToolOutput:
    """The bash tool's `background: true`: the command started, its id returned at once."""
    from coder_ls.engine.bgshells import TooManyShells

    start = getattr(ctx.shell, "start_background", None)
    if start is None:
        raise ToolError("background shells are not available in this session")
    box = options.get("box")
    if ctx.sandbox_required and box is None:
        raise ToolError(
            f"refused to run `{_short(command)}`: it was allowed without a question only to run in the "
            "sandbox (sandbox.autoAllow), and no sandbox runs it now"
        )
    ctx.report(f"Starting in the background: {_short(command)}")
    try:
        shell_id = await start(command, box=box, hide_env=options.get("hide_env", ()))
    except TooManyShells as exc:
        raise ToolError(f"not started: {exc}") from None
    return ToolOutput(f"Started in the background as {shell_id} (read it with shell_output, end it with shell_kill).")


def _status(info: Any) -> str:
    if info.state == "running":
        return f"running for {info.runtime:g} s"
    ended = "killed" if info.state == "killed" else "exited"
    return f"{ended} after {info.runtime:g} s; exit code: {info.exit_code}"


async def _output(ctx: ToolContext, inp: ShellOutputInput) -> ToolOutput:
    from coder_ls.engine.bgshells import UnknownShell

    try:
        got = await _shells(ctx).read(inp.shell_id, since=inp.since, max_bytes=ctx.config.shell.max_output_bytes)
    except UnknownShell as exc:
        raise ToolError(str(exc)) from None
    parts = [got.output.rstrip("\n") or "(no new output)"]
    if got.omitted:
        parts.append(f"[{got.omitted} earlier bytes not shown: over the output cap or no longer kept]")
    parts.append(f"[{got.info.shell_id} {_status(got.info)}; output up to byte {got.end}]")
    return ToolOutput("\n".join(parts))


async def _kill(ctx: ToolContext, inp: ShellKillInput) -> ToolOutput:
    from coder_ls.engine.bgshells import UnknownShell

    try:
        info = await _shells(ctx).kill(inp.shell_id)
    except UnknownShell as exc:
        raise ToolError(str(exc)) from None
    return ToolOutput(f"{info.shell_id} {_status(info)}.")


def make_shell_output_tool() -> Tool[ShellOutputInput]:
    return Tool(
        "shell_output",
        "New output of a background shell; its exit code once ended.",
        ShellOutputInput,
        _output,
    )


def make_shell_kill_tool() -> Tool[ShellKillInput]:
    return Tool("shell_kill", "End a background shell (all its processes).", ShellKillInput, _kill)
