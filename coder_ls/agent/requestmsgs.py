"""The messages a step's request carries, built from the session's context without going
over the whole conversation again at every step.

Each step sends the whole conversation. Turning the context into the request's messages
(`merge_roles`: neighbours of one role merged; `with_image_data`: the images loaded) walked
every message each step: in a long session (a thousand messages after a few long turns)
that was most of a step's own work. Between two steps of a turn the context only grows at
its end (the assistant's message, the tool results), so `RequestMessages` keeps what it
built and merges only the new tail onto it. Anything else (compaction, clearing, `/rewind`
give a context whose first messages are not the same objects, or an edit in place) is
rebuilt from scratch: the check (`llm.messagecache.SeenMessages`, the one the provider's
message cache uses) runs in C.

`merge_roles` is a left fold, so merging the kept last message with the new tail gives
what merging everything again would.
"""

from __future__ import annotations

from pathlib import Path

from coder_ls.agent.compact import merge_roles
from coder_ls.engine.images import has_images, with_image_data
from coder_ls.llm.messagecache import SeenMessages
from coder_ls.protocol.messages import Message

__all__ = ["RequestMessages"]


class RequestMessages:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._seen = SeenMessages()  # the context the kept result was built from
        self._merged: list[Message] = []
        self._images = False  # some message of `_merged` holds an image

    def build(self, context: list[Message]) -> list[Message]:
        """`with_image_data(root, merge_roles(context))`, from what the last call built when
        `context` only grew at its end."""
        kept = len(self._seen.messages)
        if self._merged and self._seen.leads(context, kept):
            tail = merge_roles([self._merged[-1], *context[kept:]])
            merged = [*self._merged[:-1], *tail]
            images = self._images or any(has_images(m) for m in tail)
        else:
            kept = 0
            merged = merge_roles(context)
            images = any(has_images(m) for m in merged)
        self._seen.see(context, kept)
        self._merged, self._images = merged, images
        return with_image_data(self.root, merged) if images else list(merged)
