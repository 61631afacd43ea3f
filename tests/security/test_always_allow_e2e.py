""" "Always allow" stores what the user saw and no more, through a real LSP client driving
the real server (balanced preset), the model played by the strict fake.

Each case: the user answers "Always allow" to one command; then the model runs another
command that the user never approved and that does something else. It must be asked
about (the user denies it) and must not have run.

What a rule covers is the subject, so `sandbox.autoAllow` is off (with it, both commands
would run in the sandbox unasked) and the approved commands are not readers (a reader is
never asked about, so never "Always allow"ed: `git count-objects` stands in for `git log`).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "e2e_agent"))

import pytest
from agent_e2e import api_env, calls, tool_call
from anthropic_server import FakeAnthropicServer, reply
from harness import init_git, lsp_session
from lsprotocol import types

pytestmark = pytest.mark.filterwarnings("ignore:Unknown progress token")

PY = "python3.11" if shutil.which("python3.11") else Path(sys.executable).name
HEREDOC = f"{PY} - <<'EOF'\nopen('PWNED_py', 'w').write('x')\nEOF"
TOOLS_GIT = "#!/bin/sh\necho fake-git > PWNED_tools\n"

# (approved with "Always allow", the rule stored, then a command the user never approved)
CASES = [
    ("git --no-pager count-objects -v", "git --no-pager count-objects", "git clean -fdx"),
    ("git -C . count-objects -v", "git -C . count-objects", "git -C . clean -fdx"),
    ("npm --version", "npm --version", "npm run build"),
    (f"{PY} -V", f"{PY} -V", HEREDOC),
    ("git count-objects", "git count-objects", "tools/git count-objects"),
]
ASKED = {"sandbox": {"autoAllow": False}}


def _titles(q: types.ShowMessageRequestParams) -> list[str]:
    return [a.title for a in q.actions or []]


@pytest.mark.parametrize(("first", "rule", "then"), CASES, ids=[c[2].split("\n")[0] for c in CASES])
async def test_always_allow_never_covers_a_command_the_user_did_not_approve(tmp_path, first, rule, then):
    root = init_git(tmp_path / "ws", {"README.md": "hello\n", "tools/git": TOOLS_GIT})
    (root / "tools" / "git").chmod(0o755)
    (root / "scratch.txt").write_text("untracked work the user has not committed\n")
    with FakeAnthropicServer() as fake:
        fake.push(
            calls(tool_call("bash", {"command": first}, "toolu_a1")),
            calls(tool_call("bash", {"command": then}, "toolu_b1")),
            reply("done"),
        )
        async with lsp_session(root, env=api_env(fake), init_options=ASKED) as s:
            s.answer_question = lambda q: "Always allow" if f"run `{first}`" in q.message else "Deny"
            result = await s.execute("coder.input", {"text": "look around"})
            assert result["status"] == "completed", result
    asked = [q.message for q in s.questions]
    assert len(asked) == 2 and f"run `{first}`" in asked[0], asked
    assert f"run `{then}`" in asked[1], f"{then!r} ran without a question after {first!r}: {asked}"
    if "<<" in then:
        assert _titles(s.questions[1]) == ["Allow once", "Deny"]  # nothing a rule could name
    assert (root / "scratch.txt").exists(), "git clean -fdx ran"
    assert not (root / "PWNED_py").exists() and not (root / "PWNED_tools").exists()
    rules = json.loads((root / ".coder" / "config.json").read_text())["rules"]
    assert [r["command"] for r in rules if r["tool"] == "bash"] == [rule]
