"""Text that leaves the server (to the model, the client, the session log) is UTF-8: the one
rule for what UTF-8 cannot carry.

A Linux file name is bytes: any but `/` and NUL. Python holds a name that is not UTF-8 with
each bad byte as a lone surrogate U+DC80..U+DCFF (`os.fsdecode`, "surrogateescape"), which
no UTF-8 encoder takes: one such name in a tool's result once made every later request of
the session fail (the log, the provider request). So:

- such a byte is shown as `\\xNN` (`carried`), wherever the text goes; a listing of names
  (`ls`, `glob`, `grep`'s files) also shows a control character in a name (a newline, a tab)
  as `\\xNN`, so that one line stays one name (`shown_name`);
- the file tools take it back: in a path the model gives, `\\xNN` for a byte 0x80..0xFF or a
  control character stands for that byte, unless the path as written exists
  (`name_from_shown`; a name that really holds a backslash is found first);
- any other lone surrogate (a JSON `\\ud800` from a client, a model or an MCP server) is no
  byte of anything: U+FFFD in text (`carried`), refused in a path (`stray_surrogate`);
- the encoders that would fail on one (the session log, the provider's request, the LSP
  edge's messages) apply `carried_value` to what they encode when it does not encode.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

_ESCAPES = re.compile(r"\\x([0-9a-fA-F]{2})")
_CONTROL = re.compile(r"[\x01-\x1f\x7f]")


def _byte_escape(ch: str) -> str:
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, surrogate-escaped
        return f"\\x{code - 0xDC00:02x}"
    return "\ufffd"  # any other lone surrogate: no byte of anything


def carried(text: str) -> str:
    """`text` as UTF-8 can carry it: a surrogate-escaped byte as `\\xNN`, any other lone
    surrogate as U+FFFD; unchanged (the same object) when it has none."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join(_byte_escape(c) if "\ud800" <= c <= "\udfff" else c for c in text)
    return text


def carried_value(value: Any) -> Any:
    """`carried` on every string of a JSON-like value (dicts, lists, tuples), keys included."""
    if isinstance(value, str):
        return carried(value)
    if isinstance(value, dict):
        return {carried_value(k): carried_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [carried_value(v) for v in value]
    return value


def shown_name(name: str) -> str:
    """A file name (or a relative path) for a listing: `carried`, and a control character
    as `\\xNN` too (a name with a newline stays on its line)."""
    name = carried(name)
    if _CONTROL.search(name) is None:
        return name
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", name)


def _unescape(match: re.Match[str]) -> str:
    byte = int(match.group(1), 16)
    if byte >= 0x80:
        return chr(0xDC00 + byte)  # the byte itself, surrogate-escaped as `os.fsencode` takes it
    if 0 < byte < 0x20 or byte == 0x7F:
        return chr(byte)
    return match.group()  # `\x41` is no escape of ours: kept as written


def name_from_shown(text: str) -> str:
    """`text` with the `\\xNN` escapes `shown_name` makes turned back into their bytes (as
    `os.fsdecode` holds them); unchanged when it has none."""
    if "\\x" not in text:
        return text
    return _ESCAPES.sub(_unescape, text)


def stray_surrogate(text: str) -> str | None:
    """The first lone surrogate of `text` (a JSON `\\ud800` escape), or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return text[exc.start]
    return None


class CarryingEncoder:
    """msgspec's JSON encoder for what leaves the server (the session log's records, the
    provider's request, the LSP edge's messages): a value holding a text UTF-8 cannot carry
    is encoded with `carried_value` applied, never refused (a refused record used to fail
    every later prompt of its session). Costs nothing until a value fails to encode."""

    def __init__(self) -> None:
        self._inner = msgspec.json.Encoder()

    def encode(self, value: Any) -> bytes:
        try:
            return self._inner.encode(value)
        except UnicodeEncodeError:
            return self._inner.encode(carried_value(msgspec.to_builtins(value)))
