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

__all__ = ["MessageCache", "SeenMessages"]

_Entry = tuple[Message, tuple[Block, ...], dict[str, Any]]
_CONTENT = operator.attrgetter("content")


class SeenMessages:
    """A list of messages as last seen (the objects, and a copy of each one's content list
    as it was), to tell whether a new list only grew at its end since. The checks run in C
    and allocate nothing: identities, then each message's content list against its copy
    (list equality tries identity first), so an edit of a content list in place is seen."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._blocks: list[list[Block]] = []

    def leads(self, messages: list[Message], n: int) -> bool:
        """The first `n` messages seen lead `messages`, as they were."""
        if not 0 < n <= min(len(messages), len(self.messages)):
            return False
        return all(map(operator.is_, messages[:n], self.messages)) and all(
            map(operator.eq, map(_CONTENT, messages[:n]), self._blocks)
        )

    def see(self, messages: list[Message], kept: int) -> None:
        """`messages` seen now, of which the first `kept` were checked by `leads`."""
        del self._blocks[kept:]
        self._blocks.extend(map(list, map(_CONTENT, messages[kept:])))
        self.messages = list(messages)


class MessageCache:
    def __init__(self) -> None:
        self._kept: dict[int, _Entry] = {}
        self._used: dict[int, _Entry] = {}
        self._seen = SeenMessages()  # the last request's messages
        self._out: list[dict[str, Any]] = []  # and their API form, in order

    def convert(self, message: Message, to_api: Callable[[Message], dict[str, Any]]) -> dict[str, Any]:
        key, blocks = id(message), tuple(message.content)
        hit = self._kept.get(key)
        if hit is None or hit[0] is not message or hit[1] != blocks:
            hit = (message, blocks, to_api(message))
        self._used[key] = hit
        return hit[2]

    def convert_all(self, messages: list[Message], to_api: Callable[[Message], dict[str, Any]]) -> list[dict[str, Any]]:
        """Every message in API form. When the last request's messages lead this one (a
        step only appends, and the last one may have been merged with what follows: see
        `SeenMessages`), their API form is taken as a whole and only the rest is converted:
        no walk of the whole conversation at every step."""
        last = len(self._seen.messages)
        same = next((n for n in (last, last - 1) if self._seen.leads(messages, n)), 0)
        out = [*self._out[:same], *(self.convert(m, to_api) for m in messages[same:])]
        if same == 0:
            self.done()
        self._seen.see(messages, same)
        self._out = out
        return list(out)  # the caller may replace its last entry (the cache breakpoint)

    def done(self) -> None:
        """One request converted: keep only its messages."""
        self._kept, self._used = self._used, {}
