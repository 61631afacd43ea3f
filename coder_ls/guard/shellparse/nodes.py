"""Reading tree-sitter-bash nodes: their text, the substitutions inside a command, the
words and the literal output of a command, and where an assignment or a command runs."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

_UNQUOTED_GLOB = re.compile(r"(?<!\\)[*?\[]")


class Background:
    __slots__ = ("node",)

    def __init__(self, node: Any) -> None:
        self.node = node


SCOPES = frozenset(
    "subshell pipeline command_substitution process_substitution if_statement elif_clause else_clause "
    "while_statement for_statement c_style_for_statement case_item function_definition do_group".split()
)


def conditional(node: Any) -> bool:
    """Whether an assignment may not run, or not in this shell: inside a subshell, a pipe,
    a substitution, a branch, a loop, a function, or right of `&&`/`||`."""
    child, parent = node, node.parent
    while parent is not None:
        if parent.type in SCOPES:
            return True
        if parent.type == "list" and parent.named_child_count and parent.named_children[0] != child:
            return True
        child, parent = parent, parent.parent
    return False


def in_subshell(node: Any) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in ("subshell", "pipeline", "command_substitution", "process_substitution"):
            return True
        parent = parent.parent
    return False


def declares_nameref(node: Any) -> bool:
    first = node.children[0] if node.children else None
    if first is None or text_of(first) not in ("declare", "typeset", "local"):
        return False
    return any(c.type == "word" and re.fullmatch(r"[-+][a-zA-Z]*n[a-zA-Z]*", text_of(c)) for c in node.children)


def glob_name(node: Any) -> bool:
    """Whether a command name holds an unquoted glob (`/bin/r?`, `r*`); `[` is `test`."""
    words = [node] if node.type == "word" else [c for c in node.named_children if c.type == "word"]
    unquoted = "".join(text_of(w) for w in words)
    return unquoted not in ("[", "[[") and bool(_UNQUOTED_GLOB.search(unquoted))


# The bytes of the line whose tree is being walked (`source`). A long line is parsed from a
# callback, in chunks, and tree-sitter keeps no copy of it: py-tree-sitter's `Node.text`
# would call the callback again for every node and read each chunk after freeing it (0.26,
# `node_get_text`), a crash of the checking thread. So a node's text is cut from the line.
_SOURCE: ContextVar[bytes | None] = ContextVar("coder_shell_source", default=None)


@contextlib.contextmanager
def source(data: bytes) -> Iterator[None]:
    """While a tree parsed from `data` is walked (nested scripts set their own)."""
    token = _SOURCE.set(data)
    try:
        yield
    finally:
        _SOURCE.reset(token)


def text_of(node: Any) -> str:
    data = _SOURCE.get()
    raw = node.text if data is None else data[node.start_byte : node.end_byte]
    return str(raw.decode("utf-8", "surrogateescape"))


def substitutions(node: Any) -> list[Any]:
    """The `$(…)`, `<(…)` and backquote nodes inside a command's words (not nested ones)."""
    found: list[Any] = []
    stack = list(node.children)
    while stack:
        n = stack.pop()
        if n.type in ("command_substitution", "process_substitution"):
            found.append(n)
        elif n.type not in ("word", "raw_string", "ansi_c_string", "number", "heredoc_body"):
            stack.extend(n.children)
    found.sort(key=lambda n: n.start_byte)
    return found
