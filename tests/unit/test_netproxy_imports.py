"""The network proxy is imported when a sandbox with domain rules starts, never before: not
on `initialize`'s path (the engine built, the command listing), nor by a prompt's first
request, nor by a sandbox without domain rules. Read in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

PATH = """
import asyncio, json, os, sys, tempfile
from pathlib import Path
from coder_ls.wiring import build_engine
from coder_ls.engine.host import NullHost
from coder_ls.protocol.ops import ListCommands, Submission
import coder_ls.lsp.server, coder_ls.engine.tasks, coder_ls.agent.runner, coder_ls.agent.turn
import coder_ls.llm.anthropic_provider
from coder_ls.engine.session import Session

root = Path(tempfile.mkdtemp())
engine = build_engine(root, NullHost(), dict(os.environ))


async def main():
    try:
        await engine.submit(Submission(id="l", session_id=None, op=ListCommands()))
    finally:
        await engine.shutdown()


asyncio.run(main())
session = Session.__new__(Session)
session.root, session._shell, session._agent_shell = root, None, None
shell = session.agent_shell
from coder_ls.guard import sandbox
from coder_ls.protocol.config import SandboxConfig
box = shell.sandbox_for(SandboxConfig())  # the default: no network
if box is not None:
    sandbox.wrap(box, ["true"])
print(json.dumps(sorted(sys.modules)))
"""


def test_initialize_and_a_first_prompt_do_not_import_the_proxy() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PATH], capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False
    )
    assert done.returncode == 0, done.stderr
    modules = json.loads(done.stdout.splitlines()[-1])
    assert "coder_ls.wiring" in modules and "coder_ls.guard.sandbox" in modules
    assert [m for m in modules if m in ("coder_ls.guard.netproxy", "coder_ls.guard.netfwd")] == []
