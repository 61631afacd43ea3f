"""Who may run what: the origin of an input (contract section 18).

Input does not always come from the user's typing: a code action the server offered, a
link in rendered model output, an editor plugin's automation, a remote client. What the
user did not type may only look, or ask the agent (whose turn runs under the same policy
as ever): a shell line (`!cmd`), a command that changes permissions, trust or files, and
every file command (its `` !`cmd` `` lines run in the shell) run only from `typed`.
A command says it is safe from anywhere as data (`Command.any_origin`).
"""

from __future__ import annotations

from typing import Protocol

from coder_ls.protocol.args import InputOrigin


class Command(Protocol):
    """What this check reads of a command (`commands/registry.py`'s `Command`)."""

    @property
    def name(self) -> str: ...

    @property
    def source(self) -> str: ...

    @property
    def any_origin(self) -> bool: ...


_WHAT = {
    "codeAction": "a code action",
    "link": "a link (not typed by you)",
    "client": "the client's automation",
    "remote": "a remote client",
}


def shell_refusal(origin: InputOrigin) -> str | None:
    if origin == "typed":
        return None
    return f"from {_WHAT.get(origin, origin)} (origin {origin!r}), a shell line never runs: type it yourself"


def resend_refusal(origin: InputOrigin) -> str | None:
    """Edit and resend takes files back as `/rewind` does: only from what the user typed."""
    if origin == "typed":
        return None
    return f"from {_WHAT.get(origin, origin)} (origin {origin!r}), a resend never runs: it takes files back"


def command_refusal(command: Command, origin: InputOrigin) -> str | None:
    if origin == "typed" or command.any_origin:
        return None
    why = "a command file runs shell lines and the agent" if command.source != "builtin" else "it changes things"
    return (
        f"/{command.name} runs only when you type it ({why}); it came from "
        f"{_WHAT.get(origin, origin)} (origin {origin!r})"
    )
