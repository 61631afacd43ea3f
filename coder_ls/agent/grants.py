"""What the policy answers and what a session was granted: the light half of `policy.py`.

The tools' context and the turn hold a session's grants from the first request on, but
the policy itself (its shell parser, the grant scopes) is needed only when a tool is first
called: these types live here so that a prompt's first request does not import it.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from coder_ls.guard.grants import Grant, SessionGrants

__all__ = ["Action", "Decision", "Grant", "SandboxView", "SessionGrants"]

Action = Literal["allow", "ask", "deny"]


class Decision(msgspec.Struct, frozen=True):
    """The policy's answer. `sandbox` says what the sandbox had to do with it: "sandboxed"
    when the call runs unasked because the sandbox holds it (`sandbox.autoAllow`), else why
    the sandbox could not take a call the preset asks about ("it needs the network …"), so
    that the question can say it; "" when the sandbox played no part."""

    action: Action
    reason: str = ""
    sandbox: str = ""


class SandboxView(msgspec.Struct, frozen=True):
    """Whether a sandbox will run a shell call, and what it lets the call reach: the policy's
    view of it, built by the caller (the bash tool's `sandbox_view`), never the shell itself.

    `writable`: absolute real folders the call may write (the workspace in `workspace-write`,
    `sandbox.writableRoots`, the sandbox's /tmp and cache); `network`: "none", "all", or
    "domains" (only `allowed_domains`, never `denied_domains`, through the server's proxy)."""

    runs: bool
    why_not: str = ""  # when it will not: "the sandbox is off (sandbox.mode)", ...
    backend: str = ""  # "bwrap" | "landlock"
    mode: str = ""  # "workspace-write" | "read-only"
    writable: tuple[str, ...] = ()
    network: Literal["none", "all", "domains"] = "none"
    allowed_domains: tuple[str, ...] = ()
    denied_domains: tuple[str, ...] = ()
