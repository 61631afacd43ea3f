"""Command line: `coder-ls [--stdio | --tcp --host H --port N | --acp]`, `coder-ls demo`, `coder-ls exec`."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import sys
from collections.abc import Iterator

from coder_ls import PROTOCOL_VERSION, __version__


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="coder-ls",
        description="coder_ls: a coding agent behind the Language Server Protocol.",
        epilog="Subcommands: `coder-ls demo [--workspace DIR]` drives a real LSP session against "
        "this server and prints what happens (no API key needed); `coder-ls doctor [--json]` says "
        "what an editor's health check needs (versions, provider and key, sandbox backend); "
        '`coder-ls exec [--json] [--permissions P] [--allow RULE] [--deny RULE] [--session ID] "prompt"` '
        "runs one prompt in the current folder without an editor (`coder-ls exec --help`).",
    )
    p.add_argument("--version", action="version", version=f"coder-ls {__version__} (protocol {PROTOCOL_VERSION})")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--stdio", action="store_true", help="serve LSP over stdio (the default)")
    mode.add_argument(
        "--tcp",
        action="store_true",
        help="serve LSP over TCP; the client sends the token printed at start (or CODER_LS_TOKEN) "
        "as initializationOptions.token",
    )
    mode.add_argument(
        "--acp", action="store_true", help="serve the Agent Client Protocol over stdio (Zed, JetBrains, ...)"
    )
    p.add_argument("--host", default="127.0.0.1", help="TCP host (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=2087, help="TCP port (default 2087)")
    p.add_argument("--log-file", default=None, help="also write logs to this file")
    p.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="log level (default info); logs go to stderr, never stdout",
    )
    return p


@contextlib.contextmanager
def _starting() -> Iterator[None]:
    """Start-up without full garbage collections, then what it built set aside for good.

    Loading pygls and lsprotocol (about 560 attrs classes) builds some 50,000 objects that
    live as long as the process. A full collection during the imports walks them all, finds
    nothing to free, and costs about 30 ms of `initialize` here. So only the young
    generations are collected while the server loads (they free the imports' short-lived
    cycles, so memory stays as it was), and what the loading built is then moved to the
    permanent generation (`gc.freeze`), where no later full collection walks it again.
    The thresholds come back whatever happens (an in-process caller's `--help` included).
    """
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], 1 << 30)
    try:
        yield
    finally:
        gc.collect(1)  # the young generations' garbage is not frozen with the rest
        gc.freeze()
        gc.set_threshold(*thresholds)


def main(argv: list[str] | None = None) -> int:
    args_list = sys.argv[1:] if argv is None else argv
    if args_list[:1] == ["demo"]:
        from coder_ls.demo import main as demo_main

        return demo_main(args_list[1:])
    if args_list[:1] == ["exec"]:
        from coder_ls.headless.run import main as exec_main

        return exec_main(args_list[1:])
    if args_list[:1] == ["doctor"]:
        from coder_ls.doctor import main as doctor_main

        return doctor_main(args_list[1:])
    with _starting():
        args = parser().parse_args(args_list)
        from coder_ls.lsp.logs import setup_logging

        setup_logging(args.log_level, args.log_file)
        from coder_ls.engine.shell import become_subreaper
        from coder_ls.guard import lifetime

        # Detached background jobs (nohup, setsid, disown) re-parent to us, and die with us.
        become_subreaper()
        lifetime.remove_stale_run_dirs()
        atexit.register(lifetime.sweep)
        lifetime.on_signals()  # SIGTERM, SIGHUP, SIGINT: the same sweep, then die of the signal
        if args.acp:
            from coder_ls.acp.server import serve
        else:
            from coder_ls.lsp.server import build_server

            server = build_server()
    if args.acp:
        try:
            serve()
        finally:
            lifetime.sweep()
        return 0
    try:
        if args.tcp:
            server.start_tcp(args.host, args.port)
        else:
            server.start_io()  # returns (or raises SystemExit) on `exit` and on stdin EOF
    finally:
        lifetime.sweep()
    return 0
