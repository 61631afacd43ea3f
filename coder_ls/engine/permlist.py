"""`/permissions`' list and `/permissions revoke N` (contract section 22): every rule in
force and every "Allow for session" grant, each with its source and an index, and taking
one back.

The list follows the configuration's own merge (`config.resolve`): the user's file, then
the workspace's (its rules added, its allow rules only once trusted), the editor's
settings (which replace the list), and the administrator's managed file (added last). A
revoked user or workspace rule is removed from that file and the configuration reloaded,
so the next tool call is decided without it; a session grant is dropped from the session.
A managed rule, or one the editor sends, is never removed here (`commands/builtin.py`
refuses it before any task runs).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from coder_ls.commands.builtin import describe_entry, permissions_data
from coder_ls.configcheck import ConfigProblem, describe, expand_dotted
from coder_ls.engine.config import ConfigStore, read_json_file, workspace_config_path
from coder_ls.guard.grants import Grant, SessionGrants
from coder_ls.guard.managed import managed_config_path
from coder_ls.protocol.actions import RevokePermission
from coder_ls.protocol.config import Rule
from coder_ls.protocol.results import PermissionEntry, PermissionSource
from coder_ls.userdirs import user_config_path

if TYPE_CHECKING:
    from coder_ls.engine.frame import TaskContext


def _rules_of(values: dict[str, Any]) -> list[Rule] | None:
    """A layer's rules (the ones that convert: a bad one is dropped by the merge too), or
    None when the layer sets none."""
    raw = expand_dotted(values).get("rules")
    if not isinstance(raw, list):
        return None
    out = []
    for item in raw:
        try:
            out.append(msgspec.convert(item, Rule))
        except (msgspec.ValidationError, TypeError):
            continue
    return out


def _source(store: ConfigStore, layer_source: str) -> PermissionSource:
    if layer_source == str(user_config_path(store.env)):
        return "user"
    if layer_source == str(workspace_config_path(store.root)):
        return "workspace"
    if layer_source == str(managed_config_path(store.env)):
        return "managed"
    return "editor"


def rules_with_sources(store: ConfigStore) -> list[tuple[PermissionSource, Rule]]:
    """The rules in force, in the order the merge leaves them, each with its source."""
    merged: list[tuple[PermissionSource, Rule]] = []
    for layer in store.layers():
        rules = _rules_of(layer.values)
        if rules is None:
            continue
        source = _source(store, layer.source)
        if layer.adds_lists:  # the workspace's and the managed file's add to what is in force
            merged += [(source, r) for r in rules if all(r != kept for _, kept in merged)]
        else:
            merged = [(source, r) for r in rules]
    in_force = store.config.rules  # what the last reload kept (a rule the checks dropped is not listed)
    return [(source, r) for source, r in merged if r in in_force]


def permission_entries(store: ConfigStore, grants: Iterable[Grant]) -> list[PermissionEntry]:
    """The numbered list `/permissions` shows: the rules, then this session's grants."""
    entries = [
        PermissionEntry(
            index=0, source=source, tool=r.tool, action=r.action, command=r.command, path=r.path, domain=r.domain
        )
        for source, r in rules_with_sources(store)
    ]
    entries += [
        PermissionEntry(
            index=0, source="session", tool=g.tool, action="allow", command=g.command, path=g.path, domain=g.domain
        )
        for g in grants
    ]
    return [msgspec.structs.replace(e, index=n) for n, e in enumerate(entries, 1)]


def _drop_rule(values: dict[str, Any], rule: Rule, where: str) -> None:
    """Remove the first entry of `values["rules"]` that is `rule` (ValueError if none is)."""
    rules = values.get("rules")
    for n, item in enumerate(rules if isinstance(rules, list) else []):
        try:
            same = msgspec.convert(item, Rule) == rule
        except (msgspec.ValidationError, TypeError):
            continue
        if same and isinstance(rules, list):
            del rules[n]
            return
    raise ValueError(f"the rule is no longer in {where}")


def _remove_user_rule(path: Path, rule: Rule) -> None:
    from coder_ls.fsutil import ANYWHERE, write_atomic

    found: list[ConfigProblem] = []
    current = read_json_file(path, str(path), found)
    if found:
        raise ValueError(describe(found))
    _drop_rule(current, rule, str(path))
    data = (json.dumps(current, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    write_atomic(path, data, root=ANYWHERE)  # the user's own settings


@dataclass
class RevokeTask:
    action: RevokePermission
    title: str = ""
    needs_checkpoint: bool = False

    async def run(self, ctx: TaskContext) -> None:
        engine, e, b = ctx.engine, self.action.entry, ctx.result
        grants = ctx.session.extension(SessionGrants, SessionGrants)
        grant = Grant(tool=e.tool, command=e.command, path=e.path, domain=e.domain)
        if e.source == "session":
            if not grants.discard(grant):
                b.fail("unknown_entry", f"/permissions revoke: {describe_entry(e)} is no longer granted")
                return
        elif e.source not in ("user", "workspace"):  # the command refuses these: never removed here
            b.fail("cannot_revoke", f"/permissions revoke: {describe_entry(e)} cannot be removed here")
            return
        else:
            store = engine.config_store
            rule = Rule(tool=e.tool, action=e.action, command=e.command, path=e.path, domain=e.domain)
            try:
                if e.source == "workspace":
                    trusted = store.workspace_trusted()
                    path = workspace_config_path(store.root)
                    store.update_workspace(lambda c: _drop_rule(c, rule, str(path)), own_change_trusted=trusted)
                else:
                    _remove_user_rule(user_config_path(engine.env), rule)
            except (ValueError, OSError) as exc:
                b.fail("config_not_written", f"/permissions revoke: {describe_entry(e)} was not removed: {exc}")
                return
            engine.reload_config()
            if e.action == "allow":  # "Always allow" granted the session the same: taken back with it
                grants.discard(grant)
        entries = permission_entries(engine.config_store, grants)
        b.reply = f"Revoked {e.index}: {describe_entry(e)}. The next tool call is decided without it."
        b.data = permissions_data(engine.config, engine.config.permissions, entries)
