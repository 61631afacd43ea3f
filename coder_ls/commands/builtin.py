"""The built-in slash commands."""

from __future__ import annotations

from coder_ls.commands import builtin_mcp
from coder_ls.commands.availability import Need
from coder_ls.commands.builtin_config import config_commands
from coder_ls.commands.builtin_io import compact_clear, diff_turn, io_commands
from coder_ls.commands.builtin_plugins import plugin_command
from coder_ls.commands.context import CommandContext
from coder_ls.commands.names import BUILTIN_ALIASES, BUILTIN_NAMES
from coder_ls.commands.prompts import prompt_commands
from coder_ls.commands.registry import Command, Registry
from coder_ls.history import gitops
from coder_ls.protocol.actions import (
    Action,
    ChangeModel,
    ChangePermissions,
    CommandOutcome,
    Compact,
    EnterPlan,
    LeavePlan,
    ResetSession,
    ResumeSession,
    RevokePermission,
    RunAgent,
    SideQuestion,
    TrustWorkspace,
    UndoLast,
)
from coder_ls.protocol.config import PRESETS, Config
from coder_ls.protocol.results import (
    AgentInfo,
    AgentsData,
    DiffData,
    HelpData,
    ModelData,
    ModelInfo,
    PermissionEntry,
    PermissionsData,
    RuleInfo,
    SessionInfo,
    SessionList,
    TaskData,
    TaskList,
    TaskStepInfo,
    WorktreeInfo,
    WorktreesData,
)
from coder_ls.protocol.tasks import TaskRequest, TaskState


def _usage_error(message: str) -> CommandOutcome:
    return CommandOutcome(error=message, error_code="invalid_argument")


async def cmd_help(ctx: CommandContext, args: str) -> CommandOutcome:
    catalog = ctx.catalog()
    heads = [f"/{c.name} {c.argument_hint}".rstrip() for c in catalog]
    also = [f" (also /{', /'.join(c.aliases)})" if c.aliases else "" for c in catalog]
    heads = [h + a for h, a in zip(heads, also, strict=True)]
    width = min(max((len(h) for h in heads), default=0), 24) + 2
    lines = ["Commands (type them in the input, or run coder.<name>):"]
    for head, c in zip(heads, catalog, strict=True):
        if len(head) >= width:  # a long argument hint gets a line of its own
            lines.append(f"  {head}")
            lines.append(f"  {'':{width}}{c.description}")
        else:
            lines.append(f"  {head:{width}}{c.description}")
    lines += [
        "",
        f"  {'!<command>':{width}}run a command in the session's shell",
        f"  {'<anything else>':{width}}ask the agent",
    ]
    return CommandOutcome(reply="\n".join(lines), data=HelpData(commands=catalog))


def _model_line(m: ModelInfo, current: str) -> str:
    mark = "*" if m.name == current else " "
    limits = f", {m.context_window // 1000}K context" if m.context_window else ""
    if m.deprecated:
        eol = f" on {m.end_of_life}" if m.end_of_life else ""
        instead = f", use {m.replacement}" if m.replacement else ""
        limits += f"; DEPRECATED: end of life{eol}{instead}"
    return f"  {mark} {m.name} ({m.provider}{limits}) {m.display_name or m.description}"


async def cmd_model(ctx: CommandContext, args: str) -> CommandOutcome:
    name = args.strip()
    if len(name.split()) > 1:
        return _usage_error(f"/model takes one model name, got {name!r}")
    from coder_ls.llm.models import CLAUDE_PROVIDERS, FAMILIES

    data = ctx.models(name or ctx.model)
    known = {m.name: m for m in data.models}
    if not name:
        resolved = f" = {data.resolved}" if data.resolved and data.resolved != ctx.model else ""
        where = "the account's models (Models API)" if data.source == "api" else "Known models (built-in table)"
        lines = [f"Current model: {ctx.model}{resolved} ({ctx.provider})", f"{where}:"]
        lines += [_model_line(m, data.resolved or ctx.model) for m in data.models]
        lines.append(f"Aliases: {', '.join(FAMILIES)} (the newest model of that line).")
        return CommandOutcome(reply="\n".join(lines), data=ModelData(
            current=ctx.model, provider=ctx.provider, models=data.models, resolved=data.resolved, source=data.source,
        ))  # fmt: skip
    chosen = known.get(data.resolved)
    if name in FAMILIES or chosen is not None or name.startswith("claude-"):
        provider = chosen.provider if chosen is not None and name not in FAMILIES else "anthropic"
        if provider == "anthropic" and ctx.provider in CLAUDE_PROVIDERS:  # Claude stays where it is reached
            provider = ctx.provider
        reply = f"Model set to {name}" + (f" ({data.resolved})." if data.resolved != name else ".")
        if chosen is not None and chosen.deprecated:
            eol = f" reaches its end of life on {chosen.end_of_life}" if chosen.end_of_life else " is deprecated"
            instead = f"; switch to {chosen.replacement}" if chosen.replacement else ""
            reply += f" Note: {chosen.name}{eol}{instead}."
        return CommandOutcome(reply=reply, actions=[ChangeModel(model=name, provider=provider)])
    from coder_ls.commands.registry import closest

    near = closest(name, [*known, *FAMILIES])
    hint = f" Did you mean: {', '.join(near)}?" if near else f" Known: {', '.join([*FAMILIES, *known])}."
    return _usage_error(f"Unknown model {name!r}.{hint}")


# `/permissions` (contract sections 18 and 22): the preset, and every rule and session grant
# in force with its source and an index (`engine/permlist.py`, through
# `CommandContext.permissions`, computed again for a revoke: `N` is the index the user saw
# while nothing changed). A managed rule and one the editor sends are refused here,
# before any task runs: nothing is lost.
USAGE = "/permissions [strict|balanced|auto-edit|yolo] or /permissions revoke N"


def describe_entry(e: PermissionEntry) -> str:
    """`allow bash command 'npm test' (user)`: one entry as the list shows it."""
    what = f" command {e.command!r}" if e.command else (f" path {e.path!r}" if e.path else "")
    what = what or (f" domain {e.domain!r}" if e.domain else "")
    return f"{e.action} {e.tool}{what} ({e.source})"


def permissions_data(config: Config, preset: str, entries: list[PermissionEntry]) -> PermissionsData:
    """`/permissions`' data: the preset, the rules in force and the numbered entries."""
    rules = [
        RuleInfo(tool=r.tool, action=r.action, command=r.command, path=r.path, domain=r.domain) for r in config.rules
    ]
    return PermissionsData(preset=preset, presets=list(PRESETS), rules=rules, entries=entries)


def _listing(ctx: CommandContext) -> CommandOutcome:
    entries = ctx.permissions()
    lines = [f"Permission preset: {ctx.config.permissions}", f"Presets: {', '.join(PRESETS)}"]
    if entries:
        lines.append("Rules and session grants (take one back with /permissions revoke N):")
        lines += [f"  {e.index}. {describe_entry(e)}" for e in entries]
    else:
        lines.append("Rules: none; session grants: none")
    return CommandOutcome(reply="\n".join(lines), data=permissions_data(ctx.config, ctx.config.permissions, entries))


def _revoke(ctx: CommandContext, arg: str) -> CommandOutcome:
    entries = ctx.permissions()
    if not arg.isdigit():
        return CommandOutcome(error=f"/permissions revoke takes the number of an entry, got {arg!r}. {USAGE}.")
    found = next((e for e in entries if e.index == int(arg)), None)
    if found is None:
        have = f"1 to {len(entries)}" if entries else "none: there is no rule nor session grant"
        message = f"/permissions revoke: there is no entry {arg} (entries: {have}; see /permissions)."
        return CommandOutcome(error=message)
    if found.source == "managed":
        message = (
            f"/permissions revoke: entry {arg} ({describe_entry(found)}) is set by your administrator "
            "(the managed configuration) and cannot be removed; nothing was changed."
        )
        return CommandOutcome(error=message, error_code="managed_rule")
    if found.source == "editor":
        message = (
            f"/permissions revoke: entry {arg} ({describe_entry(found)}) comes from the editor's settings "
            "(coder.rules); change it there. Nothing was changed."
        )
        return CommandOutcome(error=message, error_code="editor_rule")
    return CommandOutcome(actions=[RevokePermission(entry=found)])


async def cmd_permissions(ctx: CommandContext, args: str) -> CommandOutcome:
    words = args.split()
    if not words:
        return _listing(ctx)
    if words[0] == "revoke":
        if len(words) != 2:
            return CommandOutcome(error=f"/permissions revoke takes one entry number. {USAGE}.")
        return _revoke(ctx, words[1])
    preset = args.strip()
    if preset not in PRESETS:
        return CommandOutcome(
            error=f"Unknown permission preset {preset!r}. Presets: {', '.join(PRESETS)}. {USAGE}.",
            error_code="invalid_argument",
        )
    data = permissions_data(ctx.config, preset, ctx.permissions())
    return CommandOutcome(reply=f"Permissions set to {preset}.", data=data, actions=[ChangePermissions(preset=preset)])


async def cmd_new(ctx: CommandContext, args: str) -> CommandOutcome:
    if args.strip():
        return _usage_error("/new takes no arguments")
    return CommandOutcome(actions=[ResetSession(kind="new")])


async def cmd_clear(ctx: CommandContext, args: str) -> CommandOutcome:
    if args.strip():
        return _usage_error("/clear takes no arguments")
    return CommandOutcome(actions=[ResetSession(kind="clear")])


def _session_lines(sessions: list[SessionInfo], tz: str) -> str:
    if not sessions:
        return "No sessions yet."
    lines = [f"Recent sessions (times in {tz}):"]
    for s in sessions:
        mark = "*" if s.current else " "
        title = s.title or "(untitled)"
        lines.append(f" {mark} {s.id[:8]}  {s.updated}  {s.message_count:>4} msgs  {title}")
    return "\n".join(lines)


async def cmd_sessions(ctx: CommandContext, args: str) -> CommandOutcome:
    sessions = ctx.list_sessions(50)
    tz = ctx.config.timezone
    return CommandOutcome(reply=_session_lines(sessions, tz), data=SessionList(sessions=sessions, timezone=tz))


async def cmd_resume(ctx: CommandContext, args: str) -> CommandOutcome:
    target = args.strip()
    if not target:
        return await cmd_sessions(ctx, "")
    found = ctx.resolve_session(target)
    if isinstance(found, str):
        return CommandOutcome(error=found, error_code="unknown_session")
    return CommandOutcome(actions=[ResumeSession(session_id=found.id)])


async def cmd_diff(ctx: CommandContext, args: str) -> CommandOutcome:
    if args.split()[:1] == ["turn"]:  # what one submission changed (builtin_io.diff_turn)
        return diff_turn(args)
    result = await gitops.diff(ctx.root)
    if result.error:
        return CommandOutcome(error=result.error, error_code="not_a_git_repo")
    text = result.text or "No changes."
    return CommandOutcome(reply=text, data=DiffData(stat=result.stat, diff=result.diff, files=result.files))


def _keep_last(args: str) -> tuple[int, str] | str:
    """`--keep-last N [instructions]` (or `--keep-last=N`): (N, instructions), or an error."""
    head, _, rest = args.strip().partition(" ")
    if head.startswith("--keep-last="):
        value, rest = head.split("=", 1)[1], rest
    elif head == "--keep-last":
        value, _, rest = rest.strip().partition(" ")
    else:
        return 0, args.strip()
    if not value.isdigit():
        return f"/compact --keep-last takes a number of exchanges, got {value!r}"
    return int(value), rest.strip()


async def cmd_compact(ctx: CommandContext, args: str) -> CommandOutcome:
    parsed = _keep_last(args)
    if isinstance(parsed, str):
        return _usage_error(parsed)
    keep_last, instructions = parsed
    if instructions.split()[:1] == ["--clear"]:  # the first level alone (builtin_io.compact_clear)
        return compact_clear(keep_last, instructions)
    return CommandOutcome(actions=[Compact(instructions=instructions, keep_last=keep_last)])


async def cmd_btw(ctx: CommandContext, args: str) -> CommandOutcome:
    if not args.strip():
        return _usage_error("/btw takes a question: /btw <question>")
    return CommandOutcome(actions=[SideQuestion(question=args.strip())])


async def cmd_trust(ctx: CommandContext, args: str) -> CommandOutcome:
    if args.strip():
        return _usage_error(f"/trust takes no argument, got {args.strip()!r}")
    return CommandOutcome(actions=[TrustWorkspace()])


async def cmd_agents(ctx: CommandContext, args: str) -> CommandOutcome:
    if args.strip():
        return _usage_error(f"/agents takes no argument, got {args.strip()!r}")
    defs = ctx.agent_defs()
    infos = [AgentInfo(name=d.name, description=d.description, tools=list(d.tools) if d.tools is not None else None,
                       model=d.model, source=d.source) for d in defs]  # fmt: skip
    lines = ["Subagents (the agent's task tool runs them):"]
    for d in defs:
        tools = ", ".join(d.tools) if d.tools is not None else "all tools"
        model = f", model {d.model}" if d.model else ""
        lines.append(f"  {d.name:<16}{d.description} ({tools}{model}; {d.source})")
    return CommandOutcome(reply="\n".join(lines), data=AgentsData(agents=infos))


async def cmd_worktrees(ctx: CommandContext, args: str) -> CommandOutcome:
    """`/worktrees`: the kept worktrees of isolated steps (section 25); `drop <id>|--all`."""
    from coder_ls.isolation import worktrees

    words = args.split()
    dropped: list[str] = []
    if words and (words[0] != "drop" or len(words) != 2):
        return _usage_error("/worktrees, /worktrees drop <id>, /worktrees drop --all")
    if words:
        gone = await worktrees.drop(ctx.root, words[1], ctx.env or None)
        if not gone:
            return CommandOutcome(error=f"/worktrees drop: no kept worktree {words[1]}", error_code="bad_input")
        dropped = [k.worktree.id for k in gone]
    kept = worktrees.kept(ctx.root, ctx.env or None)
    infos = [
        WorktreeInfo(id=k.worktree.id, label=k.worktree.label, reason=k.reason, path=k.worktree.root,
                     created=k.worktree.created) for k in kept
    ]  # fmt: skip
    lines = [f"Dropped {', '.join(dropped)}."] if dropped else []
    lines += [worktrees.describe(k) for k in kept] or ["No kept worktrees."]
    return CommandOutcome(reply="\n".join(lines), data=WorktreesData(worktrees=infos, dropped=dropped))


def task_data(state: TaskState) -> TaskData:
    done, failed, skipped, total = state.counts()
    finished = done + failed + skipped
    eta = state.elapsed_seconds / finished * (total - finished) if finished and total > finished else None
    steps = [
        TaskStepInfo(id=s.id, title=s.title, status=s.status, attempts=s.attempts, tokens=s.tokens, where=s.where)
        for s in state.steps
    ]
    return TaskData(
        id=state.id, goal=state.goal, status=state.status, steps=steps, completed=done, failed=failed,
        skipped=skipped, total=total, percentage=state.percentage(), tokens_used=state.tokens_used,
        budget=state.budget, elapsed_seconds=round(state.elapsed_seconds, 1),
        eta_seconds=round(eta, 1) if eta is not None else None, report=state.report,
    )  # fmt: skip


def _task_line(state: TaskState) -> str:
    done, _, _, total = state.counts()
    return f"{state.id}  {state.status:<9} {done}/{total} steps ({state.percentage()}%)  {state.goal[:60]}"


async def cmd_task(ctx: CommandContext, args: str) -> CommandOutcome:
    from coder_ls.store import taskstore

    words = args.split()
    head = words[0] if words else ""
    if not words:
        return _usage_error("/task <goal> [--budget TOKENS], /task status [id], /task list, /task resume [id]")
    if head == "list":
        tasks = taskstore.list_tasks(ctx.root, ctx.owned_tasks)
        reply = "\n".join(_task_line(t) for t in tasks) or "No tasks in this workspace."
        return CommandOutcome(reply=reply, data=TaskList(tasks=[task_data(t) for t in tasks]))
    if head in ("status", "resume"):
        state = taskstore.find(ctx.root, words[1] if len(words) > 1 else None, ctx.owned_tasks)
        if state is None:
            which = f"matching {words[1]!r}" if len(words) > 1 else "in this workspace"
            return CommandOutcome(error=f"/task {head}: no task {which}", error_code="unknown_task")
        if head == "status":
            lines = [_task_line(state), *(f"  {s.id:<8} {s.status:<9} {s.title}" for s in state.steps)]
            if state.note:
                lines.append(f"  ({state.note})")
            return CommandOutcome(reply="\n".join(lines), data=task_data(state))
        if state.status == "completed":
            return CommandOutcome(reply=f"Task {state.id} is already completed.", data=task_data(state))
        request = TaskRequest(resume=state.id, budget=state.budget)
        return CommandOutcome(actions=[RunAgent(prompt=f"/task resume {state.id}", plan=False, task=request)])
    budget = ctx.config.tasks.default_budget
    if "--budget" in words:
        i = words.index("--budget")
        if i + 1 >= len(words) or not words[i + 1].isdigit() or int(words[i + 1]) <= 0:
            return _usage_error("/task --budget takes a number of tokens, e.g. --budget 200000")
        budget = int(words[i + 1])
        words = words[:i] + words[i + 2 :]
    goal = " ".join(words).strip()
    if not goal:
        return _usage_error("/task needs a goal")
    return CommandOutcome(actions=[RunAgent(prompt=goal, plan=False, task=TaskRequest(goal=goal, budget=budget))])


async def cmd_undo(ctx: CommandContext, args: str) -> CommandOutcome:
    arg = args.strip()
    if arg == "":
        return CommandOutcome(actions=[UndoLast()])
    if arg == "--all":
        return CommandOutcome(actions=[UndoLast(all=True)])
    return _usage_error(f"/undo takes no argument or --all, got {arg!r}")


async def cmd_plan(ctx: CommandContext, args: str) -> CommandOutcome:
    """`/plan [prompt]` (contract section 22): the session plans (reads, searches, asks,
    never writes) until the user answers the proposed plan with `coder.plan`; `/plan off`
    leaves plan mode without a plan."""
    if args.strip() == "off":
        return CommandOutcome(actions=[LeavePlan()])
    reply = "Plan mode: the agent reads and searches, never writes, and ends with a plan for you to approve."
    actions: list[Action] = [EnterPlan()]
    if args.strip():
        actions.append(RunAgent(prompt=args.strip(), plan=False))
    return CommandOutcome(reply=reply, actions=actions)


def register_builtins(registry: Registry) -> None:
    for command in (
        Command("help", "List the commands", "", cmd_help, immediate=True, any_origin=True),
        Command("model", "Show the model, or switch to another", "[name]", cmd_model, immediate=True),
        Command(
            "permissions",
            "Show the preset, rules and session grants; apply a preset or revoke one",
            "[strict|balanced|auto-edit|yolo] | revoke N",
            cmd_permissions,
            immediate=True,
        ),
        Command(
            "trust", "Apply the permissions this workspace's .coder/config.json widens", "", cmd_trust, immediate=True
        ),
        Command("new", "Start a new session", "", cmd_new),
        Command("clear", "Empty the model context of this session", "", cmd_clear, aliases=("reset",)),
        Command(
            "compact",
            "Summarise the conversation to free context",
            "[--keep-last N] [what to keep] | --clear",
            cmd_compact,
        ),
        Command("resume", "List recent sessions, or resume one", "[session id]", cmd_resume),
        Command("sessions", "List recent sessions", "", cmd_sessions, immediate=True, any_origin=True),
        Command(
            "diff",
            "Show git diff --stat and git diff of the workspace, or what a submission changed",
            "[turn [N]]",
            cmd_diff,
            immediate=True,
            any_origin=True,
            needs=(Need("git"),),
        ),
        Command(
            "undo",
            "Revert the files changed by the last submission",
            "[--all]",
            cmd_undo,
            needs=(Need("git", only_with="--all"),),
        ),
        Command(
            "btw",
            "Ask a side question without disturbing the work",
            "<question>",
            cmd_btw,
            immediate=True,
            needs=(Need("model"),),
            progress_message="Answering a side question",
        ),
        Command("agents", "List the subagents the agent can start", "", cmd_agents, immediate=True, any_origin=True),
        Command(
            "task",
            "Plan a large goal and run it with subagents; status, list, resume",
            "<goal> [--budget N] | status [id] | list | resume [id]",
            cmd_task,
            progress_message="Running the task",
        ),
        Command(
            "worktrees",
            "List the isolated steps' kept worktrees, or drop them",
            "[drop <id> | drop --all]",
            cmd_worktrees,
        ),
        Command("plan", "Plan first: read and search, never write, then propose a plan", "[prompt | off]", cmd_plan),
        *prompt_commands(),
        *builtin_mcp.COMMANDS,
        *io_commands(),
        plugin_command(),
        *config_commands(),
    ):
        registry.add_builtin(command)
    assert tuple(registry.builtin_names()) == BUILTIN_NAMES, "update coder_ls/commands/names.py"
    aliases = tuple(a for n in BUILTIN_NAMES for a in registry.get(n).aliases)  # type: ignore[union-attr]
    assert aliases == BUILTIN_ALIASES, "update BUILTIN_ALIASES in coder_ls/commands/names.py"
