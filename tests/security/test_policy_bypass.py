"""Trying to get around the permission policy with the decisions it makes (unit level:
the real `decide` with the real refused-command check, on a real directory)."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_ls.agent.policy import Grant, SessionGrants, approval_scope, decide
from coder_ls.guard.safety import check_command
from coder_ls.protocol.config import Config, Rule


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "secret").mkdir()
    (ws / "link").symlink_to(ws / "secret")
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / "gitlink").symlink_to(ws / ".git")
    return ws


def bash(command: str, config: Config, root: Path, grants: SessionGrants | None = None) -> str:
    return decide("bash", {"command": command}, config, grants, root=root, check_command=check_command).action


NPM = Config(
    permissions="balanced",
    rules=[Rule(tool="bash", action="allow", command="npm test"), Rule(tool="bash", action="allow", command="cd")],
)
GIT = Config(permissions="balanced", rules=[Rule(tool="bash", action="allow", command="git status")])


@pytest.mark.parametrize(
    "command",
    [
        "npm test $'\\'';touch PWNED",
        "npm test; touch PWNED",
        "npm test && touch PWNED",
        "npm test || touch PWNED",
        "npm test\ntouch PWNED",
        "npm test & touch PWNED",
        "npm test |& touch PWNED",
        "npm test | sh",
        "npm test $(touch PWNED)",
        "npm test `touch PWNED`",
        "npm test <(touch PWNED)",
        "{ npm test; touch PWNED; }",
        "(npm test; touch PWNED)",
        "npm test > ../x",
        "npm test > ~/.bashrc",
        "npm test >> /etc/profile",
        "npm test > $OUT",
        "npm test 2> .git/hooks/pre-commit",
        "npm test \\\n; touch PWNED",
        "npm test $X",
        "sudo npm test",
        "env npm test",
        "npm test 'unterminated",
        "f() { touch PWNED; }; npm test",
        "npm test <<EOF | sh\ntouch PWNED\nEOF",
        "exec touch PWNED",
        "npm test -c 'x'",
        "cd .. && npm test > x",
        "cd /tmp; npm test > x",
    ],
)
def test_an_allow_rule_does_not_vouch_for_more_than_it_names(command, root):
    assert bash(command, NPM, root) in ("ask", "deny"), command  # deny: refused outright


@pytest.mark.parametrize(
    "command", ["npm test", "npm test -- --watch=false", "npm test 2>&1 > out.log", "npm test > /dev/null"]
)
def test_an_allow_rule_still_allows_what_it_names(command, root):
    assert bash(command, NPM, root) == "allow"


def test_git_status_redirect_to_bashrc_is_not_allowed(root):
    # not allowed by the rule; and since a write to a shell startup file plants code, the
    # refused-command check stops it before the policy is even asked
    assert bash("git status > ~/.bashrc", GIT, root) in ("ask", "deny")
    assert bash("git status > ~/notes.txt", GIT, root) == "ask"
    assert bash("git status --short", GIT, root) == "allow"


DENY_RM = Config(
    permissions="yolo",
    rules=[Rule(tool="bash", action="allow", command="rm tmp.o"), Rule(tool="bash", action="deny", command="rm")],
)


@pytest.mark.parametrize(
    "command",
    [
        "rm x",
        "rm tmp.o",  # a general deny beats a specific allow
        "command rm x",
        "builtin rm x",
        "env rm x",
        "env -i FOO=1 rm x",
        "/bin/rm x",
        "/usr/bin/rm x",
        "\\rm x",
        "'rm' x",
        "r\\m x",
        "(rm x)",
        "{ rm x; }",
        "sh -c 'rm x'",
        'bash -c "rm x"',
        "eval rm x",
        "eval 'rm x'",
        "xargs rm < list",
        "echo x | xargs rm",
        "find . -name x -exec rm {} +",
        "sudo rm x",
        "nice -n 5 rm x",
        "timeout 5 rm x",
        "nohup rm x",
        "exec rm x",
        "f() { rm x; }; f",
        "echo $(rm x)",
        "true && rm x",
        "ls; rm x",
        "coproc rm x",
        "x=rm; $x y",
        "echo 'rm x' | sh",
        "sh <<'EOF'\nrm x\nEOF",
        "bash <<< 'rm x'",
        "env -S 'rm x'",
        "alias x=rm",
        "alias x='echo; rm y'",
    ],
)
def test_a_deny_rule_catches_the_program_however_it_is_spelled(command, root):
    assert bash(command, DENY_RM, root) == "deny", command


def test_an_unknown_program_under_a_deny_rule_is_asked(root):
    assert bash("$RM x", DENY_RM, root) == "ask"


@pytest.mark.parametrize(
    ("approved", "then"),
    [
        ("python3 gen.py", "python3 -c 'import os'"),
        ("bash x.sh", "bash -c 'rm -rf src'"),
        ("env FOO=1 make", "env FOO=1 rm -rf src"),
        ("timeout 5 make", "timeout 5 rm -rf src"),
        ("find . -name '*.o'", "find . -name '*.o' -delete"),
        ("node -v", "node -e 'process.exit()'"),
        ("rm tmp.o", "rm -rf src"),
        ("sh run.sh", "sh -c 'touch x'"),
        ("perl gen.pl", "perl -e 'unlink q(x)'"),
        ("xargs echo", "xargs rm"),
        ("sudo make install", "sudo rm -rf src"),
    ],
)
def test_a_grant_for_an_interpreter_or_wrapper_covers_only_that_command(approved, then, root):
    grants = SessionGrants(approval_scope("bash", {"command": approved}, root))
    balanced = Config(permissions="balanced")
    assert bash(approved, balanced, root, grants) == "allow"
    assert bash(then, balanced, root, grants) == "ask"
    rules = Config(rules=[Rule(tool="bash", action="allow", command=g.command) for g in grants])
    assert bash(then, rules, root) == "ask"


def test_grants_keep_the_subcommand(root):
    assert approval_scope("bash", {"command": "npm test -- -x"}, root) == [Grant("bash", command="npm test")]
    assert approval_scope("bash", {"command": "cargo build --release"}, root) == [Grant("bash", command="cargo build")]
    assert approval_scope("bash", {"command": "git status -s"}, root) == [Grant("bash", command="git status")]
    grants = SessionGrants([Grant("bash", command="git status")])
    assert bash("git status -sb", Config(), root, grants) == "allow"
    assert bash("git push", Config(), root, grants) == "ask"
    assert bash("git -c core.pager=sh status", Config(), root, grants) == "ask"


def file_action(tool: str, path: str, config: Config, root: Path, grants: SessionGrants | None = None) -> str:
    return decide(tool, {"path": path}, config, grants, root=root).action


@pytest.mark.parametrize("tool", ["write", "edit", "multiEdit"])
def test_a_deny_on_write_covers_every_writing_tool(tool, root):
    config = Config(permissions="yolo", rules=[Rule(tool="write", action="deny", path="secret/**")])
    assert file_action(tool, "secret/a.txt", config, root) == "deny"
    assert file_action(tool, "link/a.txt", config, root) == "deny"  # through a symlinked folder
    assert file_action(tool, "src/a.txt", config, root) == "allow"


def test_an_allow_rule_does_not_reach_through_a_symlink(root):
    config = Config(permissions="balanced", rules=[Rule(tool="write", action="allow", path="link/**")])
    assert file_action("write", "link/a.txt", config, root) == "ask"


@pytest.mark.parametrize("preset", ["strict", "balanced", "auto-edit", "yolo"])
@pytest.mark.parametrize(
    "path", [".git/config", ".git/hooks/pre-commit", ".git", "gitlink/config", ".coder/config.json", "sub/.git/config"]
)
@pytest.mark.parametrize("tool", ["write", "edit", "multiEdit"])
def test_protected_paths_are_always_asked_about(preset, path, tool, root):
    allow_all = [Rule(tool="*", action="allow"), Rule(tool=tool, action="allow", path="**")]
    grants = SessionGrants([Grant(tool, path="**"), Grant(tool)])
    config = Config(permissions=preset, rules=allow_all)  # type: ignore[arg-type]
    assert file_action(tool, path, config, root, grants) == "ask"
    assert file_action("read", path, config, root) == "allow"
