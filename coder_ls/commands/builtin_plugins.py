"""`/plugin`: Claude Code plugins (`plugins.py`) — list, install, enable, disable.

    /plugin [list]
    /plugin install <name>@<marketplace>     a marketplace added by name, or its folder / git URL
    /plugin install <folder or git repository>
    /plugin enable <name> | disable <name>
    /plugin marketplace add <folder or git repository>

Installing copies the plugin into the user's plugin folder; the catalog changes on the
next refresh (at once: the executor reloads the command sources after each command).
"""

from __future__ import annotations

import asyncio

from coder_ls.commands import plugins
from coder_ls.commands.context import CommandContext
from coder_ls.commands.registry import Command
from coder_ls.protocol.actions import CommandOutcome
from coder_ls.protocol.results import PluginInfo, PluginList

USAGE = (
    "/plugin [list] | install <name>@<marketplace> | install <folder or git> | enable <name> | disable <name>"
    " | marketplace add <folder or git>"
)


def _error(message: str, code: str = "invalid_argument") -> CommandOutcome:
    return CommandOutcome(error=message, error_code=code)


def _listing(ctx: CommandContext, head: str = "") -> CommandOutcome:
    found, problems = plugins.installed(ctx.env)
    names = [c.name for c in ctx.catalog()]
    infos = [
        PluginInfo(
            name=p.name,
            path=str(p.root),
            enabled=p.enabled,
            version=p.version,
            description=p.description,
            commands=[n for n in names if n.startswith(f"{p.name}:")] if p.enabled else [],
        )
        for p in found
    ]
    lines = [head] if head else []
    lines.append("Plugins:" if infos else f"No plugins installed (in {plugins.plugins_dir(ctx.env)}).")
    for info in infos:
        state = "enabled" if info.enabled else "disabled"
        added = f": {', '.join('/' + c for c in info.commands)}" if info.commands else ""
        lines.append(f"  {info.name} {info.version} ({state}){added}".replace("  ", " ", 1).rstrip())
    lines += [f"  (not a plugin: {p})" for p in problems]
    marketplaces = plugins.load_state(ctx.env).marketplaces
    return CommandOutcome(reply="\n".join(lines), data=PluginList(plugins=infos, marketplaces=marketplaces))


async def cmd_plugin(ctx: CommandContext, args: str) -> CommandOutcome:
    words = args.split()
    verb = words[0] if words else "list"
    rest = words[1:]
    match verb, rest:
        case "list", []:
            return _listing(ctx)
        case "install", [spec]:
            try:
                plugin = await asyncio.to_thread(plugins.install, ctx.env, spec)
            except (plugins.PluginError, OSError) as exc:
                return _error(f"/plugin install {spec}: {exc}", "plugin_failed")
            ctx.refresh_commands()
            return _listing(ctx, f"Installed {plugin.name} {plugin.version}".rstrip() + f" in {plugin.root}.")
        case ("enable" | "disable") as what, [name]:
            found, _ = plugins.installed(ctx.env)
            if name not in {p.name for p in found}:
                known = ", ".join(p.name for p in found) or "none"
                return _error(f"no plugin named {name!r} is installed (installed: {known})", "not_found")
            plugins.set_enabled(ctx.env, name, what == "enable")
            ctx.refresh_commands()
            return _listing(ctx, f"{what.capitalize()}d {name}.")
        case "marketplace", ["add", source]:
            try:
                name, offered = await asyncio.to_thread(plugins.add_marketplace, ctx.env, source)
            except (plugins.PluginError, OSError) as exc:
                return _error(f"/plugin marketplace add {source}: {exc}", "plugin_failed")
            listed = ", ".join(offered) or "none"
            return _listing(
                ctx, f"Added the marketplace {name} (plugins: {listed}); install with /plugin install <name>@{name}."
            )
    return _error(f"usage: {USAGE}")


def plugin_command() -> Command:
    return Command(
        "plugin", "List, install, enable or disable Claude Code plugins", "[list|install|enable|disable] …", cmd_plugin
    )
