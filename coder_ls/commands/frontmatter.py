"""Front matter of command and skill files: YAML between `---` lines.

Parsed with PyYAML's safe loader (the C one when PyYAML has libyaml), after dropping a
byte-order mark and turning CRLF into LF. Unknown keys are ignored. Like Claude Code, a
file whose front matter is not YAML still loads (`parse_lenient`): its `key: value` lines
are read as text, and a known key of the wrong type is left out; each such problem comes
back as a message (the caller warns once, naming the file). Only a front matter with no
closing `---` is a `FrontMatterError`.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any, Protocol

import msgspec

from coder_ls.protocol.config import HookEventName, HookGroup

# `argument-hint: [file] [focus]` is the usual way to write a hint, and is not YAML (a flow
# list, then more): a value that starts with `[` is taken as the text it reads as.
_HINT_LINE = re.compile(r"^(argument-hint[ \t]*:[ \t]*)(\[.*?)[ \t]*$", re.MULTILINE | re.IGNORECASE)


_CLOSING = re.compile(r"^---[ \t\f\v]*$", re.MULTILINE)


class FrontMatterError(Exception):
    pass


class CommandMeta(msgspec.Struct, frozen=True, omit_defaults=True):  # defaults left out of the memo (frontcache)
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
    max_turns: int | None = None  # an agent's `maxTurns`
    permission_mode: str = ""  # an agent's `permissionMode` (never widens: see agentdefs.py)
    isolation: str = ""  # an agent's `isolation` ("worktree": a git worktree of its own)
    color: str = ""  # an agent's `color` (no display here: noted once)
    hooks: dict[HookEventName, list[HookGroup]] = msgspec.field(default_factory=dict)  # while the skill or agent runs
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
    text = text.removeprefix("\ufeff")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.startswith("---\n") and text.rstrip() != "---":
        return None, text.strip()
    end = _CLOSING.search(text, 4)  # a search, not a split of the whole file: files can be long
    if end is None:
        raise FrontMatterError("the front matter has no closing '---' line")
    return text[4 : end.start()].removesuffix("\n"), text[end.end() :].strip()


_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def _text(key: str, value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise FrontMatterError(f"'{key}' must be text, not {type(value).__name__}")
    return str(value).strip()


def _bool(key: str, value: Any) -> bool:
    """`true`/`false`, and what people write for them: `1`/`0`, `"true"`, `yes`/`no`."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower() if isinstance(value, str | int) else None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise FrontMatterError(f"'{key}' must be true or false, not {value!r}")


def _tools(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return split_tools(value)
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        return tuple(t.strip() for t in value if t.strip())
    raise FrontMatterError("'allowed-tools' must be a list of tool names or one comma-separated string")


def _hooks(value: Any) -> dict[HookEventName, list[HookGroup]]:
    """`hooks:` in Claude Code's settings shape (only `type: command` hooks)."""
    try:
        return msgspec.convert(value or {}, dict[HookEventName, list[HookGroup]])
    except msgspec.ValidationError as exc:
        raise FrontMatterError(f"'hooks' is not in Claude Code's hooks format: {exc}") from None


def split_tools(value: str) -> tuple[str, ...]:
    """One string of tools: split on commas and on the spaces between entries, never
    inside parentheses (`Bash(git add *) Bash(git commit *)` is two entries)."""
    out: list[str] = []
    word, depth = "", 0
    for ch in value:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        if depth == 0 and (ch == "," or ch.isspace()):
            if word.strip():
                out.append(word.strip())
            word = ""
            continue
        word += ch
    if word.strip():
        out.append(word.strip())
    return tuple(out)


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


@functools.cache
def _loader() -> Any:
    """PyYAML's safe loader (the C one when built with libyaml) reading booleans as YAML 1.2
    does, as Claude Code's parser does: only `true`/`false` (`description: On`, `name: no`
    are text, not booleans)."""
    import yaml  # only files with front matter pay for the import

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    bool_tag = "tag:yaml.org,2002:bool"
    resolvers = {k: [(t, rx) for t, rx in v if t != bool_tag] for k, v in base.yaml_implicit_resolvers.items()}
    loader: Any = type("FrontMatterLoader", (base,), {"yaml_implicit_resolvers": resolvers})
    loader.add_implicit_resolver(bool_tag, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
    return loader


def _load_yaml(raw: str) -> Any:
    import yaml

    return yaml.load(raw, Loader=_loader())  # a safe loader (C or Python)


_LINE = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*)[ \t]*:[ \t]?(.*)$")
_ITEM = re.compile(r"^[ \t]+-[ \t]+(.*)$")


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


# The keys the line-by-line reading knows (as written, case and all): any other line is
# part of the value before it (`Context: …` and `user: …` lines of an agent's examples).
_OTHER_KEYS = (
    "allowed-tools",
    "tools",
    "maxTurns",
    "permissionMode",
    "isolation",
    "color",
    "hooks",
    "arguments",
    "effort",
)
_KNOWN = frozenset((*_TEXT_KEYS, *_BOOL_KEYS, *_OTHER_KEYS, "paths", "progress-message", "hidden", "aliases"))


def _flow(value: str) -> Any:
    """`[a, "b"]` as a list (JSON or bare words), else the text."""
    if value.startswith("[") and value.endswith("]"):
        try:
            items = json.loads(value)
        except ValueError:
            items = [_unquote(v) for v in value[1:-1].split(",")]
        if isinstance(items, list):
            return [str(v).strip() for v in items if str(v).strip()]
    return _unquote(value)


def _lenient(raw: str) -> dict[str, Any]:
    """What Claude Code still reads from front matter that is not YAML: `key: value` lines
    of the known keys (the value taken as text up to the line's end, colons and all), a
    key's `- item` lines, and every other line continuing the value before it."""
    data: dict[str, Any] = {}
    key: str | None = None
    for line in raw.split("\n"):
        if not line.strip():
            continue
        m = _LINE.match(line)
        if m is not None and m.group(1) in _KNOWN:
            key = m.group(1)
            value = m.group(2).strip()
            data[key] = _flow(value) if value not in ("|", ">", "|-", ">-") else ""
            continue
        if key is None:
            continue
        item = _ITEM.match(line)
        if item is not None and (isinstance(data.get(key), list) or data.get(key) == ""):
            items = data[key] if isinstance(data[key], list) else []
            items.append(_unquote(item.group(1)))
            data[key] = items
        elif isinstance(data.get(key), str):
            data[key] = f"{data[key]}\n{line.strip()}".strip()
    return data


def parse(text: str) -> tuple[CommandMeta, str]:
    """(the metadata, the body) of a command or skill file; a problem with the metadata
    raises (the strict reading the project's own tests use). See `parse_lenient`."""
    meta, body, problems = parse_lenient(text)
    if problems:
        raise FrontMatterError(problems[0])
    return meta, body


class MetaReader(Protocol):
    """Reads the front matter's text into (metadata, problems): `read_meta`, or a memo of it
    (`frontcache.FrontMatterMemo`, which keeps what it read between server starts)."""

    def __call__(self, raw: str) -> tuple[CommandMeta, list[str]]: ...


def parse_lenient(text: str, reader: MetaReader | None = None) -> tuple[CommandMeta, str, list[str]]:
    """(the metadata that could be read, the body, what could not be read). Claude Code
    loads a file whose front matter is not YAML (an unquoted colon in `description:`)
    with the keys it can still read; so does this, and says what it left out."""
    raw, body = split(text)
    if raw is None or not raw.strip():
        return CommandMeta(), body, []
    meta, problems = (reader or read_meta)(raw)
    return meta, body, list(problems)


def read_meta(raw: str) -> tuple[CommandMeta, list[str]]:
    """The front matter's text (between the `---` lines) read: a pure function of `raw`."""
    raw = _HINT_LINE.sub(lambda m: m.group(1) + json.dumps(m.group(2)), raw)
    problems: list[str] = []
    try:
        data = _load_yaml(raw)
    except Exception as exc:  # yaml.YAMLError (kept lazy: yaml is imported on first use)
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        problems.append(f"the front matter is not valid YAML{where}: {problem}; read line by line instead")
        data = _lenient(raw)
    if data is None:
        return CommandMeta(), problems
    if not isinstance(data, dict):
        problems.append(f"the front matter must be a mapping of keys, not {type(data).__name__} (ignored)")
        return CommandMeta(), problems
    values: dict[str, Any] = {}
    for key, value in data.items():
        if not isinstance(key, str):
            continue
        k = key.strip().lower()
        try:
            if k in _TEXT_KEYS:
                values[_TEXT_KEYS[k]] = _text(k, value)
            elif k in _BOOL_KEYS:
                values[_BOOL_KEYS[k]] = _bool(k, value)
            elif k == "allowed-tools":
                values["allowed_tools"] = _tools(value)
            elif k == "tools":
                values["tools"] = _tools(value)
            elif k in _EXTRA_KEYS:
                values[_EXTRA_KEYS[k]] = _extra(k, value)
            elif k == "arguments":
                values["arguments"] = _arguments(value)
            elif k == "paths":
                values["paths"] = _words(k, value)
        except FrontMatterError as exc:
            problems.append(f"{exc} (ignored)")
    if values.get("context") not in (None, "", "fork"):
        problems.append(f"'context' must be 'fork', not {values.pop('context')!r} (ignored)")
    if values.get("effort") not in (None, "", *EFFORTS):
        problems.append(f"'effort' must be one of {', '.join(EFFORTS)}, not {values.pop('effort')!r} (ignored)")
    return CommandMeta(**values), problems


# Agent-definition keys (Claude Code's subagent front matter), read for what is safe to honour.
_EXTRA_KEYS = {
    "maxturns": "max_turns",
    "permissionmode": "permission_mode",
    "isolation": "isolation",
    "color": "color",
    "hooks": "hooks",
}


def _extra(key: str, value: Any) -> Any:
    if key == "maxturns":
        if isinstance(value, bool) or not isinstance(value, int | str) or not str(value).strip().isdigit():
            raise FrontMatterError(f"'maxTurns' must be a whole number, not {value!r}")
        return int(str(value).strip())
    if key == "hooks":
        return _hooks(value)
    return _text(key, value)
