"""What is wrong with a layer of configuration, in the words the user sees.

A layer (a file, the editor's settings, one `/config key value`) is checked against the
types of `protocol/config.py`: each ill-typed or unknown key is dropped and named
(`sanitize`), so a bad part falls back to its default and the rest still applies. The
layering itself is the engine's (`engine/config.py`); `/config` (`commands/builtin_config.py`)
checks a value here before it is written, with the messages a bad file gets.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec

from coder_ls.protocol.config import Config

_UNKNOWN = re.compile(r"Object contains unknown field `([^`]+)`(?: - at `\$([^`]*)`)?")
_AT = re.compile(r" - at `\$([^`]*)`")


class ConfigProblem(msgspec.Struct, frozen=True):
    source: str
    key: str
    message: str


def expand_dotted(values: Mapping[str, Any]) -> dict[str, Any]:
    """`{"shell.timeoutSeconds": 5}` -> `{"shell": {"timeoutSeconds": 5}}` (nested objects too)."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, Mapping):
            value = expand_dotted(value)
        parts = key.split(".") if isinstance(key, str) else [key]
        target = out
        for part in parts[:-1]:
            nxt = target.get(part)
            if not isinstance(nxt, dict):
                nxt = {}
                target[part] = nxt
            target = nxt
        last = parts[-1]
        if isinstance(value, dict) and isinstance(target.get(last), dict):
            target[last] = deep_merge(target[last], value)
        else:
            target[last] = value
    return out


def deep_merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def _delete_path(values: dict[str, Any], path: list[str | int]) -> bool:
    target: Any = values
    for part in path[:-1]:
        try:
            target = target[part]
        except (KeyError, IndexError, TypeError):
            return False
    try:
        del target[path[-1]]
    except (KeyError, IndexError, TypeError):
        return False
    return True


def _parse_path(text: str) -> list[str | int]:
    parts: list[str | int] = []
    for m in re.finditer(r"\.([A-Za-z0-9_]+)|\[(\d+)\]|\['([^']*)'\]", text):
        if m.group(1) is not None:
            parts.append(m.group(1))
        elif m.group(2) is not None:
            parts.append(int(m.group(2)))
        else:
            parts.append(m.group(3))
    return parts


def _offending_path(message: str) -> list[str | int] | None:
    m = _UNKNOWN.search(message)
    if m:
        return [*_parse_path(m.group(2) or ""), m.group(1)]
    m = _AT.search(message)
    if m:
        return _parse_path(m.group(1))
    return None


def _dotted(path: list[str | int]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def sanitize(values: dict[str, Any], source: str, problems: list[ConfigProblem]) -> dict[str, Any]:
    """Drop each ill-typed or unknown key of one layer, recording a problem for it."""
    values = expand_dotted(values)
    for _ in range(64):
        try:
            msgspec.convert(values, Config, str_keys=True)
            return values
        except msgspec.ValidationError as exc:
            message = str(exc)
            path = _offending_path(message)
            if not path or not _delete_path(values, path):
                problems.append(ConfigProblem(source, "", message))
                return {}
            # A bad element of a list drops the element; the rest of the list stays.
            problems.append(ConfigProblem(source, _dotted(path), message.split(" - at ")[0]))
    return {}


def describe(problems: list[ConfigProblem]) -> str:
    lines = []
    for p in problems:
        where = f"{p.source}: key `{p.key}`" if p.key else p.source
        lines.append(f"{where}: {p.message}")
    return "coder: invalid configuration, using defaults for: " + "; ".join(lines)


def problems_of(key: str, value: Any, source: str) -> list[ConfigProblem]:
    """What is wrong with setting dotted `key` to `value` (`/config`), in the messages a bad
    file gets."""
    problems: list[ConfigProblem] = []
    sanitize(expand_dotted({key: value}), source, problems)
    return problems
