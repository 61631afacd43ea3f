"""Configuration loading: layered, validated per layer, bad parts fall back to defaults.

Precedence (later wins): defaults < user file < workspace `.coder/config.json` <
`initializationOptions` < `workspace/didChangeConfiguration` (section `coder`). The
workspace file is the repository's, not the user's: it adds to the user's `rules` and
`secrets.envNames` instead of replacing them, and what it widens waits for `/trust`
(`guard/trust.py`, the one gate).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from coder_ls.configcheck import ConfigProblem, deep_merge, expand_dotted, sanitize
from coder_ls.guard.managed import ceiling, managed_config_path
from coder_ls.guard.trust import MERGED_LISTS, TrustStore, describe_widening, split_widening
from coder_ls.protocol.config import Config
from coder_ls.saferead import UnreadableFile, read_regular_file
from coder_ls.userdirs import user_config_path


class Layer(msgspec.Struct):
    """One source of settings: its name (a file path or a protocol source) and raw values."""

    source: str
    values: dict[str, Any]
    adds_lists: bool = False  # the workspace file: its `MERGED_LISTS` add to the lists below it


def workspace_config_path(root: Path) -> Path:
    return root / ".coder" / "config.json"


MAX_CONFIG_BYTES = 1024 * 1024


def read_json_file(path: Path, source: str, problems: list[ConfigProblem]) -> dict[str, Any]:
    try:
        data = read_regular_file(path, MAX_CONFIG_BYTES)
    except UnreadableFile as exc:
        problems.append(ConfigProblem(source, "", str(exc)))
        return {}
    if data is None:
        return {}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(ConfigProblem(source, "", f"not valid UTF-8 (byte {exc.start}): ignored"))
        return {}
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(ConfigProblem(source, "", f"not valid JSON (line {exc.lineno}: {exc.msg})"))
        return {}
    if not isinstance(value, dict):
        problems.append(ConfigProblem(source, "", "must be a JSON object"))
        return {}
    return value


def resolve(layers: list[Layer]) -> tuple[Config, list[ConfigProblem]]:
    problems: list[ConfigProblem] = []
    merged: dict[str, Any] = {}
    for layer in layers:
        values = sanitize(layer.values, layer.source, problems)
        if layer.adds_lists:
            values = _added_lists(merged, values)
        merged = deep_merge(merged, values)
    config = msgspec.convert(merged, Config, str_keys=True)
    if not _known_timezone(config.timezone):
        source = next((x.source for x in reversed(layers) if "timezone" in x.values), "configuration")
        problems.append(ConfigProblem(source, "timezone", f"unknown IANA timezone {config.timezone!r}"))
        config = msgspec.structs.replace(config, timezone=Config().timezone)
    return config, problems


def _added_lists(below: Mapping[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """`values` with each of `MERGED_LISTS` it sets prefixed by the list already in force, so
    merging it adds entries and never drops the user's (an empty list changes nothing)."""
    for path in MERGED_LISTS:
        target: Any = values
        base: Any = below
        for part in path[:-1]:
            target = target.get(part) if isinstance(target, dict) else None
            base = base.get(part) if isinstance(base, Mapping) else None
        last = path[-1]
        if not isinstance(target, dict) or not isinstance(target.get(last), list):
            continue
        before: list[Any] = []
        if isinstance(base, Mapping) and isinstance(base.get(last), list):
            before = base[last]
        target[last] = [*before, *(x for x in target[last] if x not in before)]
    return values


def _known_timezone(name: str) -> bool:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


class ConfigStore:
    """Holds the layers and the effective configuration."""

    def __init__(self, root: Path, env: Mapping[str, str]) -> None:
        self.root = root
        self.env = env
        self.init_options: dict[str, Any] = {}
        self.client_settings: dict[str, Any] = {}
        self.runtime: dict[str, Any] = {}  # set by /model and /permissions; wins over the rest
        self.config = Config()
        self.problems: list[ConfigProblem] = []
        self.trust_store = TrustStore(env)
        self.untrusted: dict[str, Any] = {}  # the workspace file's widening settings left out
        self.managed: dict[str, Any] = {}  # the administrator's config.json (`guard/managed.py`)

    def layers(self) -> list[Layer]:
        problems: list[ConfigProblem] = []
        user_path = user_config_path(self.env)
        ws_path = workspace_config_path(self.root)
        user_values = read_json_file(user_path, str(user_path), problems)
        ws_values = expand_dotted(read_json_file(ws_path, str(ws_path), problems))
        managed_path = managed_config_path(self.env)
        managed_values = expand_dotted(read_json_file(managed_path, str(managed_path), problems))
        kept, wide = split_widening(ws_values, self._user_preset(user_values))
        trusted = self.trust_store.is_trusted(self.root, wide)
        self.untrusted = {} if trusted else wide
        layers = [
            Layer(str(user_path), user_values),
            Layer(str(ws_path), ws_values if trusted else kept, adds_lists=True),
            Layer("initializationOptions", dict(self.init_options)),
            Layer("workspace/didChangeConfiguration (coder)", dict(self.client_settings)),
            Layer("commands", dict(self.runtime)),
            # the administrator's, last: adds to the lists, wins on the rest (`guard/managed.py`)
            Layer(str(managed_path), {k: v for k, v in managed_values.items() if k != "permissions"}, adds_lists=True),
        ]
        self.managed = managed_values
        self._read_problems = problems
        return layers

    def set_runtime(self, **values: Any) -> None:
        self.runtime.update(values)

    def set_client_settings(self, values: dict[str, Any]) -> None:
        """New settings from the client: they win again over earlier /model or /permissions."""
        for key in expand_dotted(values):
            self.runtime.pop(key, None)
        self.client_settings = values

    def reload(self) -> list[ConfigProblem]:
        """Recompute the effective config; return the problems found (also kept)."""
        layers = self.layers()
        config, problems = resolve(layers)
        self.config = ceiling(config, self.managed)
        self.problems = [*self._read_problems, *problems]
        return self.problems

    def _user_preset(self, user_values: dict[str, Any] | None = None) -> str:
        if user_values is None:
            path = user_config_path(self.env)
            user_values = read_json_file(path, str(path), [])
        preset = expand_dotted(user_values).get("permissions")
        return preset if isinstance(preset, str) else "balanced"

    def workspace_trusted(self) -> bool:
        """Has the user trusted this folder (`/trust`)? Its command files, skills and agents
        then act as the user's (see `trust.BOUNDARY`)."""
        return self.trust_store.folder_trusted(self.root)

    def trust_workspace(self) -> dict[str, Any]:
        """`/trust`: the folder is trusted, and the workspace file's widening settings, as
        they are now, apply from now on (and in later sessions, until they change). Returns
        the config values trusted."""
        path = workspace_config_path(self.root)
        _, wide = split_widening(expand_dotted(read_json_file(path, str(path), [])), self._user_preset())
        self.trust_store.trust(self.root, wide)
        return wide

    def untrusted_message(self) -> str | None:
        if not self.untrusted:
            return None
        return (
            f"coder: {workspace_config_path(self.root)} asks for {describe_widening(self.untrusted)}: "
            "left out until you trust this workspace with /trust (these let commands run without asking you, "
            "or choose what plays the agent)"
        )

    def update_workspace(self, mutate: Callable[[dict[str, Any]], None], *, own_change_trusted: bool = True) -> None:
        """Change `.coder/config.json` (atomic write); a malformed file is never overwritten.
        `own_change_trusted=False` (`/config` in a folder not trusted): a widening written
        here waits for `/trust` like the repository's own."""
        path = workspace_config_path(self.root)
        problems: list[ConfigProblem] = []
        current = read_json_file(path, str(path), problems)
        if problems:
            raise ValueError(f"{path} cannot be used; fix it first ({problems[0].message})")
        base = self._user_preset()
        _, wide_before = split_widening(expand_dotted(current), base)
        was_trusted = self.trust_store.is_trusted(self.root, wide_before)
        mutate(current)
        if was_trusted and own_change_trusted:  # the user's own change to a file they trusted (or that widened nothing)
            self.trust_store.trust(self.root, split_widening(expand_dotted(current), base)[1], folder=False)
        from coder_ls.fsutil import write_atomic

        text = json.dumps(current, indent=2, ensure_ascii=False) + "\n"
        write_atomic(path, text.encode("utf-8"), root=self.root)
