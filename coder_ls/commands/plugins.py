"""Claude Code plugins as a command source (issue 17).

A plugin is a folder with `.claude-plugin/plugin.json` (`name`, optional `commands`,
`agents`, `skills` paths that add to the default `commands/`, `agents/`, `skills/`
folders); its `hooks/` and `.mcp.json` are for the hooks and MCP layers, which read them
from the `Plugin` record (`root`, `enabled`). Installed plugins live in the user's
plugin folder, `$XDG_CONFIG_HOME/coder/plugins/<name>/` (each installed by `/plugin`, a
copy of the source), and their state in `plugins.json` beside it (`disabled` names, and
the marketplaces the user added by name). A marketplace is a folder or git repository
with `.claude-plugin/marketplace.json` listing plugins whose `source` is a path inside
it (a source elsewhere on the network is refused: nothing here downloads).

Everything a plugin defines is namespaced by its name, as in Claude Code
(`/commit-commands:commit`, agent `feature-dev:code-explorer`), and
`${CLAUDE_PLUGIN_ROOT}` is its folder. A plugin is the user's choice, so its files act
as the user's (`guard/trust.py`); a workspace's files never install one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from coder_ls.commands.files import SourceDir
from coder_ls.fsutil import ANYWHERE, write_atomic
from coder_ls.saferead import UnreadableFile, read_regular_file
from coder_ls.userdirs import config_dir

MANIFEST = Path(".claude-plugin") / "plugin.json"
MARKETPLACE = Path(".claude-plugin") / "marketplace.json"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
MAX_JSON = 1024 * 1024


class PluginError(Exception):
    """A plugin or marketplace that cannot be used (the message says why)."""


class Plugin(msgspec.Struct, frozen=True):
    """An installed plugin: what the command, hook and MCP layers need of it."""

    name: str
    root: Path
    enabled: bool = True
    version: str = ""
    description: str = ""
    commands: tuple[Path, ...] = ()  # its command folders (the default `commands/` first)
    agents: tuple[Path, ...] = ()
    skills: tuple[Path, ...] = ()


class PluginState(msgspec.Struct, omit_defaults=True):
    disabled: list[str] = msgspec.field(default_factory=list)
    marketplaces: dict[str, str] = msgspec.field(default_factory=dict)  # name -> folder or git URL


def plugins_dir(env: Mapping[str, str]) -> Path:
    return config_dir(env) / "plugins"


def _state_path(env: Mapping[str, str]) -> Path:
    return plugins_dir(env).parent / "plugins.json"


def _read_json(path: Path) -> Any:
    try:
        data = read_regular_file(path, MAX_JSON)
    except (UnreadableFile, OSError) as exc:
        raise PluginError(f"{path}: {exc}") from None
    if data is None:
        raise PluginError(f"{path} does not exist")
    try:
        return json.loads(data)
    except ValueError as exc:
        raise PluginError(f"{path} is not valid JSON: {exc}") from None


def load_state(env: Mapping[str, str]) -> PluginState:
    try:
        return msgspec.convert(_read_json(_state_path(env)), PluginState)
    except (PluginError, msgspec.ValidationError):
        return PluginState()


def save_state(env: Mapping[str, str], state: PluginState) -> None:
    path = _state_path(env)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(msgspec.to_builtins(state), indent=2).encode() + b"\n", root=ANYWHERE)  # the user's


def _paths(root: Path, value: Any, default: str) -> tuple[Path, ...]:
    """The default folder, then the manifest's extra ones (a string or a list), inside the root."""
    extra = (
        [value]
        if isinstance(value, str)
        else [v for v in value if isinstance(v, str)]
        if isinstance(value, list)
        else []
    )
    out = [root / default]
    for item in extra:
        path = Path(os.path.normpath(root / item))
        if path.is_relative_to(root) and path not in out:
            out.append(path)
    return tuple(out)


def read_plugin(root: Path, enabled: bool = True) -> Plugin:
    manifest = _read_json(root / MANIFEST)
    if not isinstance(manifest, dict):
        raise PluginError(f"{root / MANIFEST} must be a JSON object")
    name = manifest.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise PluginError(f"{root / MANIFEST}: 'name' must be a plugin name (letters, digits, - _ .), not {name!r}")
    text = {k: str(manifest[k]) if isinstance(manifest.get(k), str) else "" for k in ("version", "description")}
    return Plugin(
        name=name,
        root=root,
        enabled=enabled,
        version=text["version"],
        description=text["description"],
        commands=_paths(root, manifest.get("commands"), "commands"),
        agents=_paths(root, manifest.get("agents"), "agents"),
        skills=_paths(root, manifest.get("skills"), "skills"),
    )


def installed(env: Mapping[str, str]) -> tuple[list[Plugin], list[str]]:
    """The installed plugins (enabled or not), and a problem per folder that is not one."""
    base = plugins_dir(env)
    disabled = set(load_state(env).disabled)
    plugins: list[Plugin] = []
    problems: list[str] = []
    try:
        entries = sorted(os.scandir(base), key=lambda e: e.name)
    except OSError:
        return [], []
    for e in entries:
        if not e.is_dir(follow_symlinks=False) or e.name.startswith("."):
            continue
        try:
            plugin = read_plugin(Path(e.path))
        except PluginError as exc:
            problems.append(str(exc))
            continue
        plugins.append(msgspec.structs.replace(plugin, enabled=plugin.name not in disabled))
    return plugins, problems


def plugin_sources(plugins: list[Plugin]) -> list[SourceDir]:
    """The command and skill folders of the enabled plugins, for `files.source_dirs`."""
    out: list[SourceDir] = []
    for p in plugins:
        if not p.enabled:
            continue
        out += [SourceDir(d, "plugin", False, p.name, p.root) for d in p.commands]
        out += [SourceDir(d, "plugin", True, p.name, p.root) for d in p.skills]
    return out


def plugin_agent_dirs(plugins: list[Plugin]) -> list[SourceDir]:
    return [SourceDir(d, "plugin", False, p.name, p.root) for p in plugins if p.enabled for d in p.agents]


# -- installing ----------------------------------------------------------------------------
def _is_git_source(source: str) -> bool:
    return source.endswith(".git") or "://" in source or source.startswith("git@") or (Path(source) / ".git").exists()


def fetch_source(source: str, work: Path) -> Path:
    """A local folder as is; a git repository cloned into `work` (a local path or URL:
    git decides, with no prompt for credentials)."""
    path = Path(os.path.expanduser(source))
    if path.is_dir() and not (path / ".git").exists():
        return path.resolve()
    if not _is_git_source(source):
        raise PluginError(f"{source!r} is neither a folder nor a git repository")
    target = work / "clone"
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    done = subprocess.run(
        ["git", "clone", "--quiet", "--depth", "1", "--", source, str(target)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise PluginError(f"git clone {source} failed: {done.stderr.strip() or done.returncode}")
    return target


def marketplace_plugin(market: Path, name: str) -> Path:
    """The folder of plugin `name` in the marketplace at `market`."""
    data = _read_json(market / MARKETPLACE)
    entries = data.get("plugins") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise PluginError(f"{market / MARKETPLACE} has no 'plugins' list")
    names = [e.get("name") for e in entries if isinstance(e, dict)]
    entry = next((e for e in entries if isinstance(e, dict) and e.get("name") == name), None)
    if entry is None:
        listed = ", ".join(n for n in names if isinstance(n, str)) or "none"
        raise PluginError(f"the marketplace {market} has no plugin {name!r} (it has: {listed})")
    source = entry.get("source")
    metadata = data.get("metadata")
    prefix = metadata.get("pluginRoot") if isinstance(metadata, dict) else None
    if not isinstance(source, str):
        raise PluginError(
            f"plugin {name!r} comes from {json.dumps(source)}: only sources inside the marketplace install here"
        )
    market = market.resolve()
    folder = Path(os.path.normpath(market / (prefix if isinstance(prefix, str) else "") / source))
    if not folder.is_relative_to(market):
        raise PluginError(f"plugin {name!r}: its source {source!r} leaves the marketplace")
    if not (folder / MANIFEST).is_file():
        return _manifest_from_entry(folder, entry)
    return folder


def _manifest_from_entry(folder: Path, entry: dict[str, Any]) -> Path:
    """A plugin folder without its own manifest: Claude Code takes the marketplace entry
    as its manifest (Anthropic's plugin-dev is one), and so does `install`."""
    if not folder.is_dir():
        raise PluginError(f"plugin {entry.get('name')!r}: {folder} does not exist")
    return folder


def install(env: Mapping[str, str], spec: str) -> Plugin:
    """`/plugin install`: `name@marketplace` (a marketplace added by name, or its folder or
    git URL) or a plugin's own folder or git repository. The plugin is copied into the
    plugin folder (replacing an older copy) and enabled."""
    state = load_state(env)
    with tempfile.TemporaryDirectory(prefix="coder-plugin-") as tmp:
        work = Path(tmp)
        name, at, market = spec.partition("@")
        if at:
            market_source = state.marketplaces.get(market, market)
            folder = marketplace_plugin(fetch_source(market_source, work), name)
            manifest_name = name
        else:
            folder = fetch_source(spec, work)
            manifest_name = ""
        has_manifest = (folder / MANIFEST).is_file()
        plugin_name = read_plugin(folder).name if has_manifest else manifest_name
        if not _NAME.match(plugin_name):
            raise PluginError(f"{spec!r} is not a plugin ({MANIFEST} missing)")
        base = plugins_dir(env)
        base.mkdir(parents=True, exist_ok=True)
        staging = base / f".{plugin_name}.installing"
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(folder, staging, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        if not has_manifest:
            (staging / MANIFEST).parent.mkdir(exist_ok=True)
            (staging / MANIFEST).write_text(json.dumps({"name": plugin_name}) + "\n")
        final = base / plugin_name
        old = base / f".{plugin_name}.old"
        shutil.rmtree(old, ignore_errors=True)
        if final.exists():
            final.rename(old)
        staging.rename(final)
        shutil.rmtree(old, ignore_errors=True)
    set_enabled(env, plugin_name, True)
    return read_plugin(final)


def add_marketplace(env: Mapping[str, str], source: str) -> tuple[str, list[str]]:
    """`/plugin marketplace add`: remember a marketplace by its name; (name, its plugins)."""
    with tempfile.TemporaryDirectory(prefix="coder-market-") as tmp:
        folder = fetch_source(source, Path(tmp))
        data = _read_json(folder / MARKETPLACE)
    name = data.get("name") if isinstance(data, dict) else None
    if not isinstance(name, str) or not _NAME.match(name):
        raise PluginError(f"{source}: {MARKETPLACE} needs a 'name'")
    entries = data.get("plugins", [])
    plugins = [str(e["name"]) for e in entries if isinstance(e, dict) and isinstance(e.get("name"), str)]
    state = load_state(env)
    local = Path(os.path.expanduser(source))
    state.marketplaces[name] = str(local.resolve()) if local.is_dir() else source
    save_state(env, state)
    return name, plugins


def set_enabled(env: Mapping[str, str], name: str, enabled: bool) -> None:
    state = load_state(env)
    disabled = [n for n in state.disabled if n != name]
    if not enabled:
        disabled.append(name)
    if disabled != state.disabled or not _state_path(env).exists():
        state.disabled = disabled
        save_state(env, state)
