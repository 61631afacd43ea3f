"""The baseline for the `initialize` ratio: a minimal pygls server with one trivial command.

Started exactly like coder-ls (`python benchmarks/baseline_server.py`, stdio), so the ratio
measures what coder-ls adds on top of Python + pygls + lsprotocol.
"""

from __future__ import annotations

from pygls.lsp.server import LanguageServer

server = LanguageServer("baseline", "0")


@server.command("baseline.ping")
def ping(ls: LanguageServer, *args: object) -> str:
    return "pong"


if __name__ == "__main__":
    server.start_io()
