"""`coder-ls exec`'s command line, checked before anything is built (a mistake is exit 2).

`--allow` and `--deny` take the `allowed-tools` syntax of a command file (contract
section 10, `commands/allowed.py`): `Bash(npm test:*)` (commands starting with `npm test`),
`Bash(npm test)` (that command only), `Read`, `Edit(src/**)`, `mcp__server__tool`. They
become the turn's grants: an allow lets a call run without the question its preset would
ask (deny rules, refused commands and protected paths still apply), a deny refuses it
whatever else says yes. A bare `Bash` may be denied (every command) but never allowed.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import NoReturn

import msgspec

from coder_ls.commands.allowed import ALWAYS_RUN, parse_allowed_tools
from coder_ls.protocol.actions import ToolGrant
from coder_ls.protocol.config import PRESETS

USAGE = 'coder-ls exec [--json] [--permissions P] [--allow RULE]... [--deny RULE]... [--session ID] "prompt"'
EPILOG = (
    "Exit codes: 0 completed, 1 failed (no API key, the model or a tool failed the turn, a !shell line failed), "
    "2 bad input (an unknown flag, an empty prompt, a bad rule, an unknown session), "
    "130 interrupted (Ctrl-C ends the turn cleanly). A call the preset and the rules would "
    "ask about is denied (said on stderr): nothing waits for an answer. "
    'A prompt of "-" is read from stdin.'
)


class BadUsage(Exception):
    """A mistake on the command line: said on stderr, exit 2."""


class HelpShown(Exception):
    """`--help`: printed, exit 0."""


@dataclass(frozen=True)
class ExecArgs:
    prompt: str
    json: bool = False
    permissions: str | None = None
    session: str | None = None
    grants: tuple[ToolGrant, ...] = ()


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise BadUsage(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            sys.stderr.write(message)
        raise HelpShown


def parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="coder-ls exec",
        usage=USAGE,
        description="Run one prompt (or /command, or !shell line) in the current folder without an editor.",
        epilog=EPILOG,
    )
    p.add_argument("prompt", nargs="?", default=None, help='what to do ("-": read it from stdin)')
    p.add_argument("--json", action="store_true", help="one JSON event per line (the coder/event payloads)")
    p.add_argument("--permissions", choices=PRESETS, default=None, help="the preset for this run")
    p.add_argument("--allow", action="append", default=[], metavar="RULE", help="e.g. 'Bash(npm test:*)'")
    p.add_argument("--deny", action="append", default=[], metavar="RULE", help="e.g. 'Edit(src/**)'")
    p.add_argument("--session", default=None, metavar="ID", help="continue this session (its id)")
    return p


def deny_grants(entries: list[str]) -> tuple[tuple[ToolGrant, ...], list[str]]:
    """`--deny` rules as deny grants; a problem per rule that denies nothing."""
    grants: list[ToolGrant] = []
    problems: list[str] = []
    for entry in entries:
        name = entry.strip()
        if name.lower() in ("bash", "bash(*)", "bash(:*)"):
            grants.append(ToolGrant(tool="bash", action="deny"))  # every command
            continue
        if name.lower() in ALWAYS_RUN:
            problems.append(f"--deny {entry!r}: {name} cannot be denied by a rule (it runs in every preset)")
            continue
        found, bad = parse_allowed_tools((entry,))
        if bad or not found:
            problems.append(f"--deny {entry!r}: {_why(bad)}")
            continue
        grants.extend(msgspec.structs.replace(g, action="deny", exact=False) for g in found)
    return tuple(grants), problems


def allow_grants(entries: list[str]) -> tuple[tuple[ToolGrant, ...], list[str]]:
    grants: list[ToolGrant] = []
    problems: list[str] = []
    for entry in entries:
        found, bad = parse_allowed_tools((entry,))
        if bad:
            problems.append(f"--allow {entry!r}: {_why(bad)}")
        grants.extend(found)
    return tuple(grants), problems


def _why(problems: list[str]) -> str:
    """`allowed-tools`' own wording, without its prefix and its "(skipped)": here it stops the run."""
    if not problems:
        return "not a rule"
    text = problems[0].split(": ", 1)[-1]
    return text.removesuffix(" (skipped)")


def parse(argv: list[str], stdin_text: str | None = None) -> ExecArgs:
    """The checked command line. `stdin_text`: what stdin held, for a prompt of `-`."""
    ns = parser().parse_args(argv)
    prompt = ns.prompt
    if prompt == "-":
        prompt = stdin_text if stdin_text is not None else sys.stdin.read()
    if prompt is None or not prompt.strip():
        raise BadUsage('the prompt is empty: give it as the last argument, e.g. coder-ls exec "fix the tests"')
    if ns.session is not None and not ns.session.strip():
        raise BadUsage("--session needs a session id")
    allowed, problems = allow_grants(ns.allow)
    denied, more = deny_grants(ns.deny)
    problems += more
    if problems:
        raise BadUsage("bad rule: " + "; ".join(problems))
    return ExecArgs(
        prompt=prompt,
        json=ns.json,
        permissions=ns.permissions,
        session=ns.session.strip() if ns.session else None,
        grants=denied + allowed,  # a deny is looked at first anyway; listed first for the reader
    )
