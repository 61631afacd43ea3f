"""Command line: `coder-ls [--stdio | --tcp --host H --port N | --acp]`, `coder-ls demo`."""

from __future__ import annotations

import argparse
import atexit
import sys

from coder_ls import __version__


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="coder-ls",
        description="coder_ls: a coding agent behind the Language Server Protocol.",
        epilog="Subcommand: `coder-ls demo [--workspace DIR]` drives a real LSP session against "
        "this server and prints what happens (no API key needed).",
    )
    p.add_argument("--version", action="version", version=f"coder-ls {__version__}")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--stdio", action="store_true", help="serve LSP over stdio (the default)")
    mode.add_argument("--tcp", action="store_true", help="serve LSP over TCP")
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


def main(argv: list[str] | None = None) -> int:
    args_list = sys.argv[1:] if argv is None else argv
    if args_list[:1] == ["demo"]:
        from coder_ls.demo import main as demo_main

        return demo_main(args_list[1:])
    args = parser().parse_args(args_list)
    from coder_ls.lsp.logs import setup_logging

    setup_logging(args.log_level, args.log_file)
    from coder_ls.engine import lifetime
    from coder_ls.engine.shell import become_subreaper

    # Detached background jobs (nohup, setsid, disown) re-parent to us, and die with us.
    become_subreaper()
    lifetime.remove_stale_run_dirs()
    atexit.register(lifetime.sweep)
    lifetime.on_signals()  # SIGTERM, SIGHUP, SIGINT: the same sweep, then die of the signal
    if args.acp:
        from coder_ls.acp.server import serve

        try:
            serve()
        finally:
            lifetime.sweep()
        return 0
    from coder_ls.lsp.server import build_server

    server = build_server()
    try:
        if args.tcp:
            server.start_tcp(args.host, args.port)
        else:
            server.start_io()  # returns (or raises SystemExit) on `exit` and on stdin EOF
    finally:
        lifetime.sweep()
    return 0
