"""What a prompt's first request imports (issue 25, `first_turn_at_once`): the turn, the
provider and the task runner, but not the policy, its shell parser, the refused-command
check or the shell, which the first tool call or command imports. Read in a
fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

FIRST_REQUEST = """
import json, sys
import coder_ls.lsp.server, coder_ls.wiring, coder_ls.engine.tasks
import coder_ls.agent.runner, coder_ls.agent.turn, coder_ls.llm.anthropic_provider
from pathlib import Path
from coder_ls.engine.session import Session
session = Session.__new__(Session)  # the shells a session holds are made at first use
session.root, session._shell, session._agent_shell = Path("."), None, None
session.agent_shell  # the agent's shell object, as a turn's tool context takes it
print(json.dumps(sorted(sys.modules)))
"""

LATER = (
    "coder_ls.agent.policy",
    "coder_ls.agent.grantscope",
    "coder_ls.guard.shellparse",
    "coder_ls.guard.safety",
    "coder_ls.engine.shell",
    "coder_ls.engine.redactshell",
)


def test_the_first_request_does_not_import_the_tool_policy() -> None:
    done = subprocess.run(
        [sys.executable, "-c", FIRST_REQUEST], capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False
    )
    assert done.returncode == 0, done.stderr
    modules = json.loads(done.stdout)
    assert "coder_ls.agent.turn" in modules
    assert [m for m in modules if m.startswith(LATER)] == []
