"""Generated variants of "Always allow": whatever command the user approved, the rule it
stores never allows a command that runs a different program, with different global
options, a different subcommand, or, for an interpreter or a tool without a subcommand,
anything but the exact command approved. The oracle here is written from the words of
the two commands, independently of `agent/grantscope.py`."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from coder_ls.agent.policy import SessionGrants, approval_scope, decide
from coder_ls.protocol.config import Config, Rule

ROOT = Path("/nonexistent-workspace")
PROGRAMS = ["git", "npm", "cargo", "python3.11", "node", "tools/git", "./git", "ls", "make", "uv"]
if shutil.which("git"):
    PROGRAMS.append(str(shutil.which("git")))
GLOBALS = [["--no-pager"], ["-C", "."], ["-C", "/"], ["-c", "core.pager=cat"], ["--version"], ["-V"], ["-p"], ["-s"]]
SUBCOMMANDS = [None, "log", "status", "clean", "run", "exec", "build", "-"]
ARGS = [[], ["-1"], ["-fdx"], ["build"], ["--oneline"], ["-c", "x"], ["--", "rm", "-rf", "/"]]
INTERPRETERS = {"python3.11", "node"}

Parts = tuple[str, tuple[str, ...], "str | None", tuple[str, ...]]


@st.composite
def commands(draw: st.DrawFn) -> Parts:
    program = draw(st.sampled_from(PROGRAMS))
    options = tuple(w for g in draw(st.lists(st.sampled_from(GLOBALS), max_size=2)) for w in g)
    sub = draw(st.sampled_from(SUBCOMMANDS))
    args = tuple(draw(st.sampled_from(ARGS))) if sub is not None else ()
    return program, options, sub, args


def words(parts: Parts) -> list[str]:
    program, options, sub, args = parts
    return [program, *options, *([sub] if sub is not None else []), *args]


def same_program(a: str, b: str) -> bool:
    git = shutil.which("git")
    return a == b or (git is not None and {a, b} == {"git", git})


def may_cover(approved: Parts, other: Parts) -> bool:
    """What a rule from `approved` may allow at most."""
    if words(approved) == words(other) or (
        same_program(approved[0], other[0]) and words(approved)[1:] == words(other)[1:]
    ):
        return True
    program, options, sub, _ = approved
    if Path(program).name in INTERPRETERS or Path(other[0]).name in INTERPRETERS:
        return False
    if not same_program(program, other[0]):
        return False
    if program in ("git", "npm", "cargo", "make", "uv") or (Path(program).name == "git" and "/" in program):
        # a multi-word tool: the same options and subcommand, and a subcommand there is
        if sub is None or other[1] != options or other[2] != sub:
            return False
        if (program, sub) in (("npm", "exec"), ("uv", "run")):  # they run any command given after them
            return False
        if (program, sub) == ("npm", "run"):  # the script run is part of it
            return other[3][:1] == approved[3][:1] and bool(approved[3]) and not approved[3][0].startswith("-")
        return True
    return True  # a plain program: any arguments (`ls -la` covers `ls -R`)


@settings(max_examples=400, deadline=None)
@given(approved=commands(), other=commands())
def test_a_stored_rule_allows_nothing_the_user_did_not_approve(approved: Parts, other: Parts) -> None:
    first, then = shlex.join(words(approved)), shlex.join(words(other))
    scope = approval_scope("bash", {"command": first}, ROOT)
    rules = Config(permissions="balanced", rules=[Rule(tool="bash", action="allow", command=g.command) for g in scope])
    by_rule = decide("bash", {"command": then}, rules, root=ROOT, check_command=lambda c, r: None)
    by_grant = decide(
        "bash", {"command": then}, Config(), SessionGrants(scope), root=ROOT, check_command=lambda c, r: None
    )
    # what the rule or grant adds: a read-only line runs unasked without either (section 20)
    unruled = decide("bash", {"command": then}, Config(), root=ROOT, check_command=lambda c, r: None)
    for decision in (by_rule, by_grant):
        if decision.action == "allow" and unruled.action != "allow":
            assert may_cover(approved, other), (first, [g.command for g in scope], then)
    # what the user approved is allowed again, unless no rule could name it
    if scope:
        again = decide("bash", {"command": first}, rules, root=ROOT, check_command=lambda c, r: None)
        assert again.action == "allow", (first, [g.command for g in scope])


def test_the_reported_cases_by_name() -> None:
    cases = {
        "git --no-pager log -1": (
            "git --no-pager log",
            ["git clean -fdx", "git --no-pager clean -fdx", "git log --output=x"],  # `git log` alone only reads
        ),
        "npm --version": ("npm --version", ["npm install evil", "npm --version run x", "npm"]),
        "python3.11 -V": ("python3.11 -V", ["python3.11 -", "python3.11 -c 'import os'", "python3.11 -V -c x"]),
        "git status": ("git status", ["tools/git status", "./git status", "sub/git status -s"]),
        "npm run build": ("npm run build", ["npm run deploy", "npm exec evil"]),
        "uv run pytest": ("uv run pytest", ["uv run rm -rf /", "uv run pytest -x"]),
    }
    for approved, (rule, refused) in cases.items():
        scope = approval_scope("bash", {"command": approved}, ROOT)
        assert [g.command for g in scope] == [rule], approved
        grants = SessionGrants(scope)
        for then in refused:
            assert decide("bash", {"command": then}, Config(), grants, root=ROOT).action == "ask", (approved, then)
