"""Built-ins the command model makes possible (contract section 18): `/effort`, `/status`,
`/skills`. Read-only but for `/effort`, which changes this session's default alone."""

from __future__ import annotations

import json
from typing import Any, Literal

import msgspec

from coder_ls.commands.context import CommandContext
from coder_ls.commands.registry import Command
from coder_ls.protocol.actions import ChangeEffort, CommandOutcome, WriteConfig
from coder_ls.protocol.results import ConfigData, ConfigEntry, EffortData, SkillEntry, SkillsData, StatusData

LEVELS = ("low", "medium", "high", "max")


def _effort(ctx: CommandContext) -> EffortData:
    if ctx.session_effort:
        return EffortData(effort=ctx.session_effort, source="session", levels=list(LEVELS))
    if ctx.config.effort:
        return EffortData(effort=ctx.config.effort, source="config", levels=list(LEVELS))
    return EffortData(effort=None, source="default", levels=list(LEVELS))


async def cmd_effort(ctx: CommandContext, args: str) -> CommandOutcome:
    level = args.strip().lower()
    if not level:
        data = _effort(ctx)
        where = {"session": "set with /effort", "config": "from the configuration", "default": "the model's default"}
        return CommandOutcome(reply=f"Effort: {data.effort or 'auto'} ({where[data.source]}).", data=data)
    if level not in (*LEVELS, "auto"):
        message = f"Unknown effort {args.strip()!r}: one of {', '.join(LEVELS)}, or auto (the configuration's)"
        return CommandOutcome(error=message, error_code="invalid_argument")
    chosen = None if level == "auto" else level
    data = EffortData(effort=chosen or ctx.config.effort, source="session" if chosen else "config", levels=list(LEVELS))
    reply = f"Effort set to {level} for this session." if chosen else "Effort back to the configuration's."
    return CommandOutcome(reply=reply, data=data, actions=[ChangeEffort(level=chosen)])


async def cmd_status(ctx: CommandContext, args: str) -> CommandOutcome:
    if args.strip():
        return CommandOutcome(error=f"/status takes no argument, got {args.strip()!r}", error_code="invalid_argument")
    from coder_ls import __version__

    disabled = await ctx.unavailable() if ctx.unavailable is not None else []
    data = StatusData(
        version=__version__, model=ctx.model, provider=ctx.provider, effort=_effort(ctx).effort,
        permissions=ctx.config.permissions, trusted=ctx.trusted, sandbox=ctx.config.sandbox.mode,
        session_id=ctx.session_id, context_percent=ctx.context_percent, disabled=disabled,
    )  # fmt: skip
    lines = [
        f"coder-ls {data.version}",
        f"Model: {data.model} ({data.provider}), effort {data.effort or 'auto'}",
        f"Permissions: {data.permissions}; workspace {'trusted' if data.trusted else 'not trusted'}",
        f"Sandbox: {data.sandbox}",
        f"Session: {data.session_id} ({data.context_percent}% of the context used)",
        "MCP servers: none",
    ]
    lines += [f"Unavailable: /{c.name}: {c.reason}" for c in disabled]
    return CommandOutcome(reply="\n".join(lines), data=data)


async def cmd_skills(ctx: CommandContext, args: str) -> CommandOutcome:
    if args.strip():
        return CommandOutcome(error=f"/skills takes no argument, got {args.strip()!r}", error_code="invalid_argument")
    skills = []
    for c in ctx.catalog():
        if c.model_invocable is None:  # not a skill
            continue
        active = c.activation is None or c.activation.active
        by = c.activation.by if c.activation is not None else None
        skills.append(SkillEntry(c.name, c.source, c.model_invocable, active, by))
    lines = ["Skills:"] if skills else ["No skills."]
    for s in skills:
        who = "the model may invoke it" if s.model_invocable else "you only"
        state = "" if s.active else ", not active yet (no matching file touched)"
        lines.append(f"  {s.name:<20} {s.source}; {who}{state}")
    return CommandOutcome(reply="\n".join(lines), data=SkillsData(skills=skills))


def _flatten(values: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(values, dict) or not values:
        return {prefix: values} if prefix else {}
    out: dict[str, Any] = {}
    for k, v in values.items():
        out.update(_flatten(v, f"{prefix}.{k}" if prefix else k))
    return out


def _entries(ctx: CommandContext) -> list[ConfigEntry]:
    from coder_ls.configcheck import expand_dotted

    effective = _flatten(msgspec.to_builtins(ctx.config))
    layers = [(source, _flatten(expand_dotted(values))) for source, values in (ctx.config_layers or list)()]
    out = []
    for key, value in effective.items():
        layer = next((source for source, flat in reversed(layers) if key in flat), "default")
        out.append(ConfigEntry(key=key, value=value, layer=layer))
    return out


async def cmd_config(ctx: CommandContext, args: str) -> CommandOutcome:
    words = args.split()
    scopes = [w for w in words if w in ("--user", "--workspace")]
    words = [w for w in words if w not in scopes]
    if len(scopes) > 1:
        return CommandOutcome(error="/config takes --user or --workspace, not both", error_code="invalid_argument")
    entries = _entries(ctx)
    known = {e.key: e for e in entries}
    if not words:
        lines = [f"  {e.key} = {json.dumps(e.value)}  ({e.layer})" for e in entries]
        return CommandOutcome(reply="Configuration:\n" + "\n".join(lines), data=ConfigData(entries=entries))
    key = words[0]
    if key not in known:
        from coder_ls.commands.registry import closest

        near = closest(key, known)
        hint = f" Did you mean: {', '.join(near)}?" if near else ""
        return CommandOutcome(error=f"/config: unknown key {key!r}.{hint}", error_code="invalid_argument")
    if len(words) == 1:
        e = known[key]
        return CommandOutcome(reply=f"{e.key} = {json.dumps(e.value)} ({e.layer})", data=ConfigData(entries=[e]))
    raw = args.split(key, 1)[1].replace("--user", "").replace("--workspace", "").strip()
    try:
        value = json.loads(raw)
    except ValueError:
        value = raw  # plain text: a string
    scope: Literal["user", "workspace"] = "user" if scopes == ["--user"] else "workspace"
    from coder_ls.configcheck import problems_of

    problems = problems_of(key, value, f"/config {key}")
    if problems:
        from coder_ls.configcheck import describe

        return CommandOutcome(error=describe(problems), error_code="invalid_config")
    where = "your user file" if scope == "user" else ".coder/config.json"
    action = WriteConfig(key=key, value=json.dumps(value), scope=scope)
    entry = ConfigEntry(key=key, value=value, layer=where)
    return CommandOutcome(reply=f"{key} = {json.dumps(value)}, written to {where}.", data=ConfigData(entries=[entry]),
                          actions=[action])  # fmt: skip


def config_commands() -> list[Command]:
    return [
        Command("config", "Show the configuration and where each value comes from, or set one",
                "[key [value]] [--user|--workspace]", cmd_config, aliases=("settings",)),
        Command("effort", "Show or set this session's reasoning effort", "[low|medium|high|max|auto]", cmd_effort),
        Command("status", "What is in force: model, effort, permissions, trust, sandbox, session", "", cmd_status,
                immediate=True, any_origin=True),
        Command("skills", "List the skills, who may invoke them, and whether they are active", "", cmd_skills,
                immediate=True, any_origin=True),
    ]  # fmt: skip
