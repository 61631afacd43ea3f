"""The API form of a conversation's messages, converted once per message.

Every step of a turn sends the whole conversation again. Converting it (`merge_roles`,
then each block to its API dict) was linear in the session's length at every step: with
a few hundred messages in the session (a long turn, or many turns), ~1 ms of CPU a step,
more than the rest of the step's own work. The messages of the session's context are
the same objects from one request to the next (the session appends; compaction, clearing
and image loading make new messages or blocks rather than editing old ones, and
`merge_roles` passes a message it does not merge through as it is), so their API form
is kept by identity and reused.

A hit needs the very same message object holding the very same blocks (the entry holds
both, so no id is reused while it lives). Only the messages of the latest request are
kept, so nothing outlives the conversation that holds it. The dicts handed out are
shared between requests: a caller that changes one (the cache breakpoint) copies it
first (`anthropic_convert._mark_last_cacheable`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coder_ls.protocol.messages import Block, Message

__all__ = ["MessageCache"]

_Entry = tuple[Message, tuple[Block, ...], dict[str, Any]]


class MessageCache:
    def __init__(self) -> None:
        self._kept: dict[int, _Entry] = {}
        self._used: dict[int, _Entry] = {}

    def convert(self, message: Message, to_api: Callable[[Message], dict[str, Any]]) -> dict[str, Any]:
        key, blocks = id(message), tuple(message.content)
        hit = self._kept.get(key)
        if hit is None or hit[0] is not message or hit[1] != blocks:
            hit = (message, blocks, to_api(message))
        self._used[key] = hit
        return hit[2]

    def done(self) -> None:
        """One request converted: keep only its messages."""
        self._kept, self._used = self._used, {}
