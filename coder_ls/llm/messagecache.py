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

import operator
from collections.abc import Callable
from typing import Any

from coder_ls.protocol.messages import Block, Message

__all__ = ["MessageCache"]

_Entry = tuple[Message, tuple[Block, ...], dict[str, Any]]
_CONTENT = operator.attrgetter("content")


class MessageCache:
    def __init__(self) -> None:
        self._kept: dict[int, _Entry] = {}
        self._used: dict[int, _Entry] = {}
        # the last request's messages, their blocks and their API form, in order
        self._last: list[Message] = []
        self._blocks: list[tuple[Block, ...]] = []
        self._out: list[dict[str, Any]] = []

    def convert(self, message: Message, to_api: Callable[[Message], dict[str, Any]]) -> dict[str, Any]:
        key, blocks = id(message), tuple(message.content)
        hit = self._kept.get(key)
        if hit is None or hit[0] is not message or hit[1] != blocks:
            hit = (message, blocks, to_api(message))
        self._used[key] = hit
        return hit[2]

    def convert_all(self, messages: list[Message], to_api: Callable[[Message], dict[str, Any]]) -> list[dict[str, Any]]:
        """Every message in API form. When the last request's messages lead this one (the
        same objects holding the same content lists: a step only appends, and the last one
        may have been merged with what follows), their API form is taken as a whole, and
        only the rest is converted: no walk of the whole conversation at every step (the
        checks run in C: identities, and each message's blocks, so an edit in place is seen)."""
        same = self._common(messages)
        out = [*self._out[:same], *(self.convert(m, to_api) for m in messages[same:])]
        if same == 0:
            self.done()
        self._last, self._out = list(messages), out
        self._blocks = list(map(tuple, map(_CONTENT, messages)))
        return list(out)  # the caller may replace its last entry (the cache breakpoint)

    def _common(self, messages: list[Message]) -> int:
        for n in (len(self._last), len(self._last) - 1):
            if n > 0 and len(messages) >= n and all(map(operator.is_, messages[:n], self._last)):
                if all(map(operator.eq, map(tuple, map(_CONTENT, messages[:n])), self._blocks)):
                    return n
        return 0

    def done(self) -> None:
        """One request converted: keep only its messages."""
        self._kept, self._used = self._used, {}
