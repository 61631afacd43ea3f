"""`coder-ls exec`'s rules: `--allow`/`--deny` in the `allowed-tools` syntax become the
turn's grants, and the policy honours a deny grant for file tools like a deny rule (the
end-to-end runs are in tests/e2e_agent/test_e2e_exec.py)."""

from __future__ import annotations

import pytest

from coder_ls.agent.policy import decide
from coder_ls.headless.args import BadUsage, parse
from coder_ls.protocol.actions import ToolGrant
from coder_ls.protocol.config import Config


def test_rules_become_the_turns_grants():
    args = parse(
        ["--allow", "Bash(npm test)", "--allow", "Bash(git add:*)", "--deny", "Bash", "--deny", "Edit(src/**)", "go"]
    )
    assert args.grants == (
        ToolGrant(tool="bash", action="deny"),
        ToolGrant(tool="edit", path="src/**", action="deny"),
        ToolGrant(tool="bash", command="npm test", exact=True),
        ToolGrant(tool="bash", command="git add", exact=False),
    )
    assert args.prompt == "go" and not args.json and args.permissions is None and args.session is None


@pytest.mark.parametrize(
    "argv",
    [
        ["--allow", "Bash", "go"],
        ["--allow", "Bash(*)", "go"],
        ["--allow", "Nope", "go"],
        ["--deny", "Todowrite", "go"],
        ["--deny", "Nope(x)", "go"],
        ["go", "--bogus"],
        [""],
        ["--session", " ", "go"],
    ],
)
def test_bad_rules_and_flags_are_bad_usage(argv):
    with pytest.raises(BadUsage):
        parse(argv)


def test_a_prompt_of_dash_is_read_from_stdin():
    assert parse(["--json", "-"], stdin_text="from a pipe\n").prompt == "from a pipe\n"
    with pytest.raises(BadUsage):
        parse(["-"], stdin_text="  \n")


def test_a_deny_grant_refuses_a_file_tool_whatever_the_preset(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 1\n")
    deny = (ToolGrant(tool="edit", path="src/**", action="deny"),)
    yolo = Config(permissions="yolo")
    edit = {"path": "src/a.py", "oldString": "x", "newString": "z"}
    assert decide("edit", edit, yolo, root=tmp_path, turn_grants=deny).action == "deny"
    write = {"path": "src/a.py", "content": "z\n"}  # every tool that writes files, as a deny rule
    assert decide("write", write, yolo, root=tmp_path, turn_grants=deny).action == "deny"
    other = {"path": "b.py", "oldString": "y", "newString": "z"}
    assert decide("edit", other, yolo, root=tmp_path, turn_grants=deny).action == "allow"
    assert decide("read", {"path": "src/a.py"}, yolo, root=tmp_path, turn_grants=deny).action == "allow"


def test_a_client_cannot_send_turn_grants_over_lsp():
    """Turn grants come from the user's own command line only: a `coder.input` (a link, a
    script, a hostile client) that carries `grants` gets none of them."""
    from coder_ls.lsp.commands import decode

    raw = {"text": "hi", "grants": [{"tool": "bash", "action": "allow", "command": "rm"}], "origin": "link"}
    try:
        op, _ = decode("coder.input", [raw], [])
    except Exception as exc:  # refused outright is as good as ignored
        assert "grants" in str(exc) or "unknown" in str(exc).lower()
        return
    assert op.grants == ()
