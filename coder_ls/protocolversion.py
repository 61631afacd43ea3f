"""Server and client say which version of the editor contract they speak (contract section 24).

An extension or plugin built for one MAJOR and a server built for another fail in ways a user
cannot read (a command that is not there, a field that means something else), so both edges
(`lsp/`, `acp/`) compare the client's version with `PROTOCOL_VERSION` at `initialize` and,
when the MAJOR differs, say so in one sentence that names both and what to update. A client
that says nothing (every client written before versions were announced) is not judged: it keeps
working as it did. The sentence starts with `MISMATCH_PREFIX`, which the clients that check
for themselves use to drop this copy of what they already said.
"""

from __future__ import annotations

import re

from coder_ls import PROTOCOL_VERSION, __version__

MISMATCH_PREFIX = "coder-ls protocol mismatch:"
_VERSION = re.compile(r"^(\d+)\.(\d+)$")


def major(version: object) -> int | None:
    """MAJOR of a `"MAJOR.MINOR"` string; None for anything else (absent, a number, garbage)."""
    if not isinstance(version, str) or not (m := _VERSION.match(version.strip())):
        return None
    return int(m.group(1))


def client_version(options: object) -> str | None:
    """`protocolVersion` of an `initializationOptions` object, when it is a usable version."""
    value = options.get("protocolVersion") if isinstance(options, dict) else None
    return value.strip() if isinstance(value, str) and major(value) is not None else None


def mismatch(client: object, client_name: str | None = None) -> str | None:
    """The message for a client that speaks another MAJOR, or None (same MAJOR, or it said nothing)."""
    theirs, ours = major(client), major(PROTOCOL_VERSION)
    if theirs is None or ours is None or theirs == ours:
        return None
    who = f"the editor's client ({client_name})" if client_name else "the editor's client"
    both = f"coder-ls {__version__} speaks protocol {PROTOCOL_VERSION} and {who} speaks {str(client).strip()}"
    if theirs > ours:
        todo = "update coder-ls (`pipx upgrade coder-ls` or `uv tool upgrade coder-ls`), or start a newer one"
    else:
        todo = f"update the editor's Coder extension or plugin to one for protocol {ours}.x"
    return f"{MISMATCH_PREFIX} {both}: {todo}."
