"""Sensitive arguments (contract section 18): a command whose arguments are secret (a
token, a password for a service) has them shown as `***` in everything the session keeps
or shows: the events, the session log, the SQLite index, the transcript of `/resume`.

The model's context keeps the real text (the turn needs it); what is written or sent is
masked. From the moment a sensitive command runs, its argument text and each of its
words of `MIN_CHARS` or more are masked for the rest of the session (the model may
repeat them). Typed structs are masked field by field and converted back to their type.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

import msgspec

MASK = "***"
MIN_CHARS = 4  # a shorter word is not masked alone (it would mask every "the")

T = TypeVar("T")


class Masks:
    def __init__(self) -> None:
        self._values: list[str] = []
        self._pattern: re.Pattern[str] | None = None

    def __bool__(self) -> bool:
        return self._pattern is not None

    def add(self, args: str, words: list[str]) -> None:
        new = [v for v in (args.strip(), *words) if len(v) >= MIN_CHARS and v not in self._values]
        if not new:
            return
        self._values += new
        longest_first = sorted(self._values, key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(v) for v in longest_first))

    def text(self, text: str) -> str:
        return self._pattern.sub(MASK, text) if self._pattern is not None else text

    def struct(self, value: T) -> T:
        """`value` (a msgspec struct) with every string in it masked."""
        if self._pattern is None:
            return value
        raw = msgspec.to_builtins(value)
        return msgspec.convert(self._walk(raw), type(value))

    def _walk(self, raw: Any) -> Any:
        if isinstance(raw, str):
            return self.text(raw)
        if isinstance(raw, list):
            return [self._walk(x) for x in raw]
        if isinstance(raw, dict):
            return {k: self._walk(v) for k, v in raw.items()}
        return raw
