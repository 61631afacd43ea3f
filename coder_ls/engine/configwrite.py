"""`/config key value`: one setting written into the user's or the workspace's file
(contract section 18), checked first exactly as a bad file would be (`configcheck.sanitize`:
the same messages), so nothing invalid is ever written. A workspace write of a
permission-widening setting goes through the trust gate like any other: written, and
left out until `/trust` unless the file was trusted already (`ConfigStore.update_workspace`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from coder_ls.configcheck import ConfigProblem, describe
from coder_ls.engine.config import read_json_file
from coder_ls.engine.frame import TaskContext
from coder_ls.protocol.actions import WriteConfig
from coder_ls.userdirs import user_config_path


def _set(values: dict[str, Any], key: str, value: Any) -> None:
    *parents, last = key.split(".")
    target = values
    for part in parents:
        nxt = target.get(part)
        if not isinstance(nxt, dict):
            nxt = target[part] = {}
        target = nxt
    target[last] = value


@dataclass
class WriteConfigTask:
    action: WriteConfig
    title: str = ""
    needs_checkpoint: bool = False

    async def run(self, ctx: TaskContext) -> None:
        engine, a, b = ctx.engine, self.action, ctx.result
        value = json.loads(a.value)
        store = engine.config_store
        try:
            if a.scope == "workspace":
                trusted = store.workspace_trusted()
                store.update_workspace(lambda current: _set(current, a.key, value), own_change_trusted=trusted)
            else:
                from coder_ls.fsutil import ANYWHERE, write_atomic

                path = user_config_path(engine.env)
                found: list[ConfigProblem] = []
                current = read_json_file(path, str(path), found)
                if found:
                    raise ValueError(describe(found))
                _set(current, a.key, value)
                path.parent.mkdir(parents=True, exist_ok=True)
                data = (json.dumps(current, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
                write_atomic(path, data, root=ANYWHERE)  # the user's own settings
        except (ValueError, OSError) as exc:
            b.fail("config_not_written", f"/config: {a.key} was not written: {exc}")
            return
        message = engine.reload_config()
        if message and store.untrusted:
            b.reply += f"\n{message}"
