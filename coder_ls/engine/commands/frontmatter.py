"""Front matter of command and skill files: YAML between `---` lines.

Parsed with PyYAML's safe loader (a real YAML parser: lists, quoting, block scalars),
after dropping a byte-order mark and turning CRLF into LF. Unknown keys are ignored;
a known key of the wrong type, or YAML that does not parse, is a `FrontMatterError`
whose message says what is wrong (the caller names the file).
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

# `argument-hint: [file] [focus]` is the usual way to write a hint, and is not YAML (a flow
# list, then more): a value that starts with `[` is taken as the text it reads as.
_HINT_LINE = re.compile(r"^(argument-hint[ \t]*:[ \t]*)(\[.*?)[ \t]*$", re.MULTILINE | re.IGNORECASE)


class FrontMatterError(Exception):
    pass


class CommandMeta(msgspec.Struct, frozen=True):
    """What a command or skill file says about itself (keys as in the contract, section 10).
    Some are kept for features wired later (allowed-tools, context, agent)."""

    name: str = ""
    description: str = ""
    argument_hint: str = ""
    when_to_use: str = ""
    allowed_tools: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()  # a subagent definition's tools (section 13)
    model: str = ""
    context: str = ""
    agent: str = ""
    disable_model_invocation: bool = False
    user_invocable: bool = True
    # the command model (contract section 18)
    arguments: tuple[str, ...] = ()  # named arguments: `$file`, `$focus`
    effort: str = ""  # low | medium | high | max: this command's turn
    paths: tuple[str, ...] = ()  # globs: a conditional skill, offered once a matching file is touched
    progress_message: str = ""  # the work-done progress title while it runs
    hidden: bool = False  # runnable, but not in /help or the catalog
    sensitive: bool = False  # its arguments are secret: *** in all the session keeps or shows


_TEXT_KEYS = {
    "name": "name",
    "description": "description",
    "argument-hint": "argument_hint",
    "when_to_use": "when_to_use",
    "model": "model",
    "context": "context",
    "agent": "agent",
    "effort": "effort",
    "progress-message": "progress_message",
}
_BOOL_KEYS = {
    "disable-model-invocation": "disable_model_invocation",
    "user-invocable": "user_invocable",
    "hidden": "hidden",
    "sensitive": "sensitive",
}
EFFORTS = ("low", "medium", "high", "max")
_ARG_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def split(text: str) -> tuple[str | None, str]:
    """(the YAML text or None, the body), after BOM and CRLF normalisation."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if not text.startswith("---\n") and text.rstrip() != "---":
        return None, text.strip()
    lines = text.split("\n")
    for n in range(1, len(lines)):
        if lines[n].rstrip() == "---":
            return "\n".join(lines[1:n]), "\n".join(lines[n + 1 :]).strip()
    raise FrontMatterError("the front matter has no closing '---' line")


def _text(key: str, value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise FrontMatterError(f"'{key}' must be text, not {type(value).__name__}")
    return str(value).strip()


def _tools(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(t.strip() for t in value.split(",") if t.strip())
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        return tuple(t.strip() for t in value if t.strip())
    raise FrontMatterError("'allowed-tools' must be a list of tool names or one comma-separated string")


def _words(key: str, value: Any) -> tuple[str, ...]:
    """A list of names or globs, or one string of them (comma or space separated)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(w for w in re.split(r"[,\s]+", value) if w)
    if isinstance(value, list) and all(isinstance(w, str) for w in value):
        return tuple(w.strip() for w in value if w.strip())
    raise FrontMatterError(f"'{key}' must be a list of text or one string, not {type(value).__name__}")


def _arguments(value: Any) -> tuple[str, ...]:
    names = _words("arguments", value)
    for name in names:
        if not _ARG_NAME.match(name) or name == "ARGUMENTS":
            raise FrontMatterError(f"'arguments': {name!r} is not a name for $name (letters, digits, _)")
    if len(set(names)) != len(names):
        raise FrontMatterError("'arguments' names one argument twice")
    return names


def parse(text: str) -> tuple[CommandMeta, str]:
    """(the metadata, the body) of a command or skill file."""
    raw, body = split(text)
    if raw is None or not raw.strip():
        return CommandMeta(), body
    import yaml  # only files with front matter pay for the import

    raw = _HINT_LINE.sub(lambda m: m.group(1) + json.dumps(m.group(2)), raw)
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise FrontMatterError(f"the front matter is not valid YAML{where}: {problem}") from None
    if data is None:
        return CommandMeta(), body
    if not isinstance(data, dict):
        raise FrontMatterError(f"the front matter must be a mapping of keys, not {type(data).__name__}")
    values: dict[str, Any] = {}
    for key, value in data.items():
        if not isinstance(key, str):
            continue
        k = key.strip().lower()
        if k in _TEXT_KEYS:
            values[_TEXT_KEYS[k]] = _text(k, value)
        elif k in _BOOL_KEYS:
            if not isinstance(value, bool):
                raise FrontMatterError(f"'{k}' must be true or false, not {value!r}")
            values[_BOOL_KEYS[k]] = value
        elif k == "allowed-tools":
            values["allowed_tools"] = _tools(value)
        elif k == "tools":
            values["tools"] = _tools(value)
        elif k == "arguments":
            values["arguments"] = _arguments(value)
        elif k == "paths":
            values["paths"] = _words(k, value)
    if values.get("context") not in (None, "", "fork"):
        raise FrontMatterError(f"'context' must be 'fork', not {values['context']!r}")
    if values.get("effort") not in (None, "", *EFFORTS):
        raise FrontMatterError(f"'effort' must be one of {', '.join(EFFORTS)}, not {values['effort']!r}")
    return CommandMeta(**values), body
