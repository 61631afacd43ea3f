"""`allowed-tools` of a command or skill file, in the familiar syntax, as `ToolGrant`s.

    allowed-tools: Bash(git add:*), Bash(npm test), Read, Edit(src/**)

`Bash(x:*)` grants the shell commands that start with `x`, `Bash(x)` that command only
(matched on the parsed command by the policy: a compound line only when every part is covered, never a
redirection outside the workspace, never `-c`/`-e` code, interpreters only exactly);
`Read`, `Grep`, `Glob`, `LS` the read tools; `Edit`, `MultiEdit`, `Write` (optionally with a
path glob) the file tools; `WebFetch(domain:docs.python.org)` web_fetch from that host
(`domain:*.python.org` its subdomains, as the rules' `domain` reads), a bare `WebFetch`
from any public host; `mcp__server__tool` an MCP server's tool, `mcp__server` all of its
tools. A bare `Bash` (every command) is not granted: a command file must name its commands.
Unknown names (another agent's tools) are reported and skipped.
The grant lasts for the turn the command starts; deny rules, the refused-command check
and the protected paths still apply.
"""

from __future__ import annotations

import re

from coder_ls.protocol.actions import ToolGrant

_ENTRY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_-]*)\s*(?:\((.*)\))?\s*$", re.S)
_MCP = re.compile(r"^mcp__[A-Za-z0-9_-]+$")  # `mcp__server` or `mcp__server__tool`
TOOL_NAMES = {  # Claude Code's tool names (lower-cased) -> ours
    "bash": "bash",
    "read": "read",
    "grep": "grep",
    "glob": "glob",
    "ls": "ls",
    "edit": "edit",
    "multiedit": "multiEdit",
    "write": "write",
    "todowrite": "todoWrite",
    "todoread": "todoRead",
    "webfetch": "web_fetch",
}


# Claude Code's tools that run without asking here anyway (the policy's ALWAYS_ALLOWED):
# naming them grants nothing and is no problem.
# `WebSearch` too: the provider's search is offered or not by the rules, never asked.
ALWAYS_RUN = frozenset({"task", "skill", "todowrite", "todoread", "bashoutput", "killshell", "killbash", "websearch"})
_DOMAIN = re.compile(r"^domain:\s*((?:\*\.)?[A-Za-z0-9.-]+)$")


def parse_allowed_tools(entries: tuple[str, ...]) -> tuple[tuple[ToolGrant, ...], list[str]]:
    """(the grants, a problem per entry that grants nothing)."""
    grants: list[ToolGrant] = []
    problems: list[str] = []
    for entry in entries:
        m = _ENTRY.match(entry)
        if m is not None and m.group(1).lower() in ALWAYS_RUN and not m.group(2):
            continue
        tool = TOOL_NAMES.get(m.group(1).lower()) if m else None
        if m is not None and _MCP.match(m.group(1)) and not m.group(2):
            grants.append(ToolGrant(tool=m.group(1)))  # an MCP server's tool(s), by name
            continue
        if m is None or tool is None:
            problems.append(f"allowed-tools: {entry!r} is not a tool this agent has (skipped)")
            continue
        spec = (m.group(2) or "").strip()
        if tool == "bash":
            prefix = spec.endswith(":*") or spec.endswith(" *")
            command = spec[:-2].strip() if prefix else spec.strip()
            if not command or command == "*":
                problems.append(f"allowed-tools: {entry!r} would allow every command; name them, e.g. Bash(npm test:*)")
                continue
            grants.append(ToolGrant(tool="bash", command=command, exact=not prefix))
        elif tool == "web_fetch":
            d = _DOMAIN.match(spec)
            if spec and (d is None or d.group(1).strip(".") == ""):
                problems.append(f"allowed-tools: {entry!r}: name a host, e.g. WebFetch(domain:docs.python.org)")
                continue
            grants.append(ToolGrant(tool="web_fetch", domain=d.group(1).strip(".").lower() if d else None))
        else:
            grants.append(ToolGrant(tool=tool, path=spec or None))
    return tuple(grants), problems
