"""The environment of every process the server starts (one function builds it).

The server's own environment may hold credentials (`ANTHROPIC_API_KEY`,
`ANTHROPIC_AUTH_TOKEN`, and whatever the user lists in `secrets.envNames`). The
SDK inside the server needs them; no child does. `child_env` is the only way the
server builds a child's environment: the persistent shell (`!cmd`, the agent's
bash, auto-verify, tasks), git, ripgrep and any other subprocess. The values
themselves are kept out of what enters a session by `guard.redact`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

# the model's credentials, a gateway's headers (they may carry one), `--tcp`'s token
# RAY_AUTH_TOKEN: the key to a Ray cluster the /task steps run on (contract section 25)
ALWAYS_SECRET = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_CUSTOM_HEADERS",
    "CODER_LS_TOKEN",
    "RAY_AUTH_TOKEN",
)


def secret_names(extra: Iterable[str] = ()) -> tuple[str, ...]:
    """The names removed from every child's environment (fixed ones first)."""
    names = list(ALWAYS_SECRET)
    names.extend(n for n in extra if n and n not in names)
    return tuple(names)


def child_env(
    extra_secrets: Iterable[str] = (),
    *,
    base: Mapping[str, str] | None = None,
    drop: Iterable[str] = (),
    set_: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """`base` (default: our environment) minus secrets and `drop`, plus `set_`."""
    hidden = set(secret_names(extra_secrets)) | set(drop)
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in hidden}
    if set_:
        env.update({k: v for k, v in set_.items() if k not in hidden})
    return env
