"""The managed layer (contract section 18): what an administrator sets for every user of
a machine, that neither the user, the editor, a command nor a workspace can override.

It is read from `$CODER_MANAGED_DIR` (default `/etc/coder`; the variable is how tests
and containers point elsewhere), every time the configuration is computed:

- `config.json`: applied after every other layer. Its lists (`rules`, `secrets.envNames`,
  `commands.disabled`) are added to the lists in force, so a managed deny rule cannot be
  dropped (deny rules are checked before any allow rule); its `sandbox` wins; its
  `permissions` is a ceiling (a workspace, `/permissions` or the editor may choose a
  stricter preset, never a wider one).
- `commands/` and `skills/`: command files and skills of source `managed`
  (`managed_commands`), first in the precedence order.

The folder is the administrator's, not the workspace's: nothing in it waits for `/trust`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from coder_ls.protocol.config import PRESETS, Config

DEFAULT_DIR = "/etc/coder"


def managed_dir(env: Mapping[str, str]) -> Path:
    return Path(env.get("CODER_MANAGED_DIR") or DEFAULT_DIR)


def managed_config_path(env: Mapping[str, str]) -> Path:
    return managed_dir(env) / "config.json"


def ceiling(config: Config, managed: Mapping[str, Any]) -> Config:
    """`config` with its preset no wider than the managed `permissions`."""
    top = managed.get("permissions")
    if top not in PRESETS or config.permissions not in PRESETS:  # `plan` is narrower than any
        return config
    if PRESETS.index(config.permissions) <= PRESETS.index(top):
        return config
    return msgspec.structs.replace(config, permissions=top)
