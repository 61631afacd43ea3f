"""What a shell command line does: the one parser behind the refused-command check and
the permission policy.

tree-sitter-bash builds the syntax tree (MIT, linear time, tens of microseconds for a
usual line; bashlex is GPL and fails on `case`, `coproc` and `[[`). This module turns
the tree into typed facts: every simple command that may run (inside `;`, `&&`, `|`,
subshells, `$(…)`, `<(…)`, loops, function bodies, `sh -c '…'`, `eval …`, here-docs and
literal pipes fed to a shell), with its program resolved (the basename of `/bin/rm`)
and wrappers unwrapped (`command`, `env`, `sudo`, `timeout`, `xargs`, …), every
redirection with its target, and an explicit unknown (`None`) wherever a program, a
word or a target is not a literal (a variable, a substitution, a script read from
input we cannot see). A syntax error anywhere makes the line `parsed=False`.

The walk is iterative (no recursion limit on `a && b && …`) and nested scripts are
parsed to a bounded depth, so the cost stays linear in the length of the line.
"""

from coder_ls.guard.shellparse.model import (
    DECODERS,
    INTERPRETERS,
    MAX_COMMANDS,
    MAX_DEPTH,
    SHELLS,
    WRAPPERS,
    Command,
    ParsedLine,
    Redirect,
)
from coder_ls.guard.shellparse.walk import parse, syntax

__all__ = [
    "DECODERS",
    "INTERPRETERS",
    "MAX_COMMANDS",
    "MAX_DEPTH",
    "SHELLS",
    "WRAPPERS",
    "Command",
    "ParsedLine",
    "Redirect",
    "parse",
    "syntax",
]
