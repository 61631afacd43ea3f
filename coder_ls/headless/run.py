"""`coder-ls exec`: build the folder's engine, run one submission, end with its exit code.

The run is what an editor's `coder.input` is: the same engine (`wiring.build_engine`), the
same configuration layers (`--permissions` stands where an editor's
`initializationOptions` do), the same sessions (`--session ID` continues one, an editor's
included), the same sandbox and the same checkpoints: the submission's undo record is written
by this process as a server of the workspace, so once it has ended, `/undo` in an editor's
session on this folder reverts it (`history/undojournal.py`: a session with no record of
its own takes the last one of a server that has stopped), and `/undo` in the session it
ran in (`--session`) takes it first.

Exit codes: 0 completed, 1 failed, 2 bad input, 130 interrupted (also when stdout's
reader went away, `| head -1`: the turn is ended the same way). The first SIGINT
interrupts the submission (the engine ends the turn, records what it changed and says
`turnFinished` `cancelled`); a second one ends the process at once, as SIGTERM does
(every child killed by `lifetime`).

Nothing here imports `anthropic` (the provider is our own `aiohttp` client), pygls or lsprotocol.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from coder_ls.headless.args import BadUsage, ExecArgs, HelpShown, parse
from coder_ls.headless.output import HeadlessHost, JsonLines, PlainText, Sink, Stdout

if TYPE_CHECKING:
    from coder_ls.engine.executor import Engine
    from coder_ls.protocol.results import CommandResult

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130
# A submission the engine refused as the user's mistake, not the turn's failure.
BAD_INPUT_CODES = frozenset({"unknown_session", "empty_input", "unknown_command", "bad_image", "empty_command"})


def exit_code(result: CommandResult, interrupted: bool) -> int:
    if result.status == "cancelled" or interrupted:
        return EXIT_INTERRUPTED
    if result.status == "failed" or result.error is not None:
        code = result.error.code if result.error is not None else ""
        return EXIT_BAD_INPUT if code in BAD_INPUT_CODES else EXIT_FAILED
    if result.mode == "raw" and result.exit_code not in (None, 0):
        return EXIT_FAILED  # `coder-ls exec '!make test'` fails when `make test` does, as in CI
    return EXIT_OK


def main(argv: list[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    try:
        args = parse(argv)
    except HelpShown:
        return EXIT_OK
    except BadUsage as exc:
        err.write(f"coder-ls exec: {exc}\n")
        return EXIT_BAD_INPUT
    root = Path.cwd().resolve()
    _no_terminal_input()
    from coder_ls.engine.shell import become_subreaper
    from coder_ls.guard import lifetime
    from coder_ls.lsp.logs import setup_logging  # stderr and the redaction; imports no LSP library

    setup_logging("warning", None)
    become_subreaper()  # detached jobs (nohup, setsid) re-parent to us, and die with us
    lifetime.remove_stale_run_dirs()
    lifetime.on_signals()  # SIGTERM, SIGHUP (and SIGINT until the loop takes it): sweep, then die
    try:
        return asyncio.run(_run(root, args, out, err))
    finally:
        lifetime.sweep()


def _no_terminal_input() -> None:
    """fd 0 becomes /dev/null: nothing this run starts can wait on the terminal (every
    subprocess gets stdin=DEVNULL anyway; this also covers what they start)."""
    try:
        null = os.open(os.devnull, os.O_RDONLY)
    except OSError:
        return
    os.dup2(null, 0)
    os.close(null)


async def _run(root: Path, args: ExecArgs, out: TextIO, err: TextIO) -> int:
    from coder_ls.lsp.logs import add_secret_names
    from coder_ls.protocol.ops import Submission, UserInput
    from coder_ls.wiring import build_engine

    stdout = Stdout(out)
    plain = None if args.json else PlainText(stdout, err)
    sink: Sink = plain if plain is not None else JsonLines(stdout)
    host = HeadlessHost(sink, err)
    engine = build_engine(root, host, dict(os.environ))
    if args.permissions is not None:
        engine.config_store.init_options = {"permissions": args.permissions}
    if (problem := engine.reload_config()) is not None:
        err.write(f"coder-ls: {problem}\n")
    add_secret_names(engine.config.secrets.env_names)
    submission = Submission(
        id=uuid.uuid4().hex,
        session_id=args.session,
        op=UserInput(text=args.prompt, grants=args.grants),
    )
    interrupted = _on_interrupt(engine, submission.id)
    loop = asyncio.get_running_loop()

    def reader_left() -> None:  # as on Ctrl-C: the turn ends, what it changed is recorded
        interrupted.set()
        loop.call_soon(engine.interrupt_submission, submission.id)

    stdout.on_closed = reader_left
    try:
        result = await engine.submit(submission)
    finally:
        await _shutdown(engine)
    if plain is not None and result.mode == "command" and result.reply:
        plain.reply(result.reply)
    if result.error is not None:
        message = result.error.message
        if plain is not None:
            plain.say_error(message)
        else:
            err.write(f"coder-ls: error: {message}\n")
    code = exit_code(result, interrupted.is_set())
    if plain is not None and result.session_id and code != EXIT_BAD_INPUT:
        err.write(f"coder-ls: session {result.session_id} (continue it with --session {result.session_id})\n")
    return code


def _on_interrupt(engine: Engine, submission_id: str) -> asyncio.Event:
    """SIGINT: the first interrupts the submission; a second one ends the process at once
    (after `lifetime`'s sweep), exit 130."""
    loop = asyncio.get_running_loop()
    seen = asyncio.Event()

    def on_sigint() -> None:
        if seen.is_set():
            from coder_ls.guard import lifetime

            lifetime.sweep()  # every child killed, the state directory removed
            os._exit(EXIT_INTERRUPTED)
        seen.set()
        sys.stderr.write("coder-ls: interrupted: ending the turn (Ctrl-C again to stop at once)\n")
        engine.interrupt_submission(submission_id)

    loop.add_signal_handler(signal.SIGINT, on_sigint)
    return seen


async def _shutdown(engine: Engine) -> None:
    try:
        await engine.shutdown()  # the session's log, the MCP servers, the checkpoints' server mark
    except Exception as exc:  # the run's outcome is already known: say it, keep it
        sys.stderr.write(f"coder-ls: while shutting down: {exc}\n")
