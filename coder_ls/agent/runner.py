"""The agent as the engine sees it: an `AgentRunner` (`engine/agent_api.py`).

It owns what the agent keeps across turns: its tool registry and the model providers
(one per provider and model, so connections and retries state are reused). It is built
once, at the top (`coder_ls/wiring.py`), and handed to the engine.

The turn loop, the tools and the providers are imported on first use: building the
server (at `initialized`) stays as light as it was before an agent was wired in.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from coder_ls.engine.agent_api import SkillInfo, TurnContext
from coder_ls.engine.host import Host
from coder_ls.hooks.settings import specs_of
from coder_ls.protocol.actions import RunAgent
from coder_ls.protocol.agents import AgentDef
from coder_ls.protocol.config import Config
from coder_ls.protocol.results import ModelData

if TYPE_CHECKING:
    from coder_ls.agent.instructions import ProjectInstructions
    from coder_ls.agent.requestmsgs import RequestMessages
    from coder_ls.agent.tools import ToolRegistry, ToolSpec
    from coder_ls.llm.base import Provider


def eyes_of(host: Host) -> tuple[bool, bool]:
    """(diagnostics, language queries): what the turn's editor answers (section 23)."""
    eyes = host.eyes()
    return (eyes.diagnostics_declared, eyes.language_declared) if eyes is not None else (False, False)


def _provider_of(model: str, default: str) -> str:
    """The provider for a model a command or an agent names: a Claude model stays on the
    session's Claude provider (Bedrock, Vertex, a gateway), never moved to another."""
    from coder_ls.llm.models import CLAUDE_PROVIDERS, FAMILIES, KNOWN_MODELS

    claude = model.startswith("claude-") or model in FAMILIES
    for info in KNOWN_MODELS:
        if info.name == model:
            claude = info.provider == "anthropic"
            if not claude:
                return info.provider
    if claude:
        return default if default in CLAUDE_PROVIDERS else "anthropic"
    return default


class Agent:
    def __init__(self, root: Path, env: Mapping[str, str]) -> None:
        self.root = root
        self.env = env
        self._tools: ToolRegistry | None = None
        self._specs: list[ToolSpec] | None = None
        self._providers: dict[tuple[str, ...], Provider] = {}
        self._instructions: ProjectInstructions | None = None
        self._tool_sets: dict[tuple[object, ...], tuple[ToolRegistry, list[ToolSpec]]] = {}
        self._refreshing: asyncio.Task[None] | None = None
        # each session's request messages, kept from one turn to the next: a turn starts from
        # the last one's instead of merging the whole conversation again (`agent/requestmsgs.py`)
        self._request_messages: weakref.WeakKeyDictionary[object, RequestMessages] = weakref.WeakKeyDictionary()

    def system(self, config: Config, skills: Sequence[SkillInfo] = ()) -> str:
        """The system prompt with the project's instruction files (re-read when changed),
        then the list of skills the model may load."""
        from coder_ls.agent.instructions import ProjectInstructions
        from coder_ls.agent.prompt import system_prompt
        from coder_ls.agent.skills import skills_list

        if self._instructions is None:
            self._instructions = ProjectInstructions(self.root, self.env)
        base = system_prompt(self.root, self._instructions.text(config.instructions.max_bytes))
        return base + skills_list(skills)

    def tools_for(
        self,
        skills: Sequence[SkillInfo],
        review: bool = False,
        subagents: bool = False,
        agents: Sequence[AgentDef] = (),
        planning: bool = False,
        config: Config | None = None,
        eyes: tuple[bool, bool] = (False, False),
    ) -> tuple[ToolRegistry, list[ToolSpec]]:
        """The tools and their specs for a turn: `task` where subagents may start (contract
        section 13), `skill` only when there are skills to load (the specs, first in the
        cached prefix, change only when that does), `reportFindings` in a `/review` turn,
        `exit_plan_mode` in plan mode (section 22); with `config`, the web tools as its rules
        say (section 22: one the user turned off with a deny rule is not in the prompt;
        `web_search` last, the provider's own); `eyes` (diagnostics, language queries): what
        the client declared it answers (section 23: no tool for what it cannot, and no
        prompt tokens either; `eyes_of`)."""
        listed = tuple((a.name, a.description) for a in agents) if subagents else ()
        web: tuple[object, ...] = ()
        if config is not None:
            from coder_ls.web.search import web_tools_key

            web = web_tools_key(config)
        key = (bool(skills), subagents, review, listed, planning, web, eyes)
        found = self._tool_sets.get(key)
        if found is not None:
            return found
        if len(self._tool_sets) > 16:  # agent files changed many times: drop the stale sets
            self._tool_sets.clear()
        registry = self.tools.subset(None)
        if subagents:
            from coder_ls.agent.subagents import make_task_tool

            registry.add(make_task_tool(agents))
        if skills:
            from coder_ls.agent.skills import make_skill_tool

            registry.add(make_skill_tool())
        if review:
            from coder_ls.agent.tools.findings import make_report_findings_tool

            registry.add(make_report_findings_tool())
        if planning:
            from coder_ls.agent.tools.exitplan import make_exit_plan_tool

            registry.add(make_exit_plan_tool())
        if any(eyes):
            from coder_ls.agent.eyes.tools import eye_tools

            for tool in eye_tools(*eyes):
                registry.add(tool)
        extra = [t.spec() for t in registry if t.name not in self.tools]
        specs = [*self.specs, *extra]
        if config is not None:
            from coder_ls.web.search import offered, web_search_spec

            if not offered(config, "web_fetch"):
                registry = registry.subset([n for n in registry.names() if n != "web_fetch"])
                specs = [s for s in specs if s.name != "web_fetch"]
            if (search := web_search_spec(config)) is not None:
                specs.append(search)
        found = self._tool_sets[key] = (registry, specs)
        return found

    @property
    def tools(self) -> ToolRegistry:
        if self._tools is None:
            from coder_ls.agent.tools import build_default_tools

            # the bash tool's own check (guard.safety, relative paths from the shell's cwd)
            self._tools = build_default_tools()
        return self._tools

    @property
    def specs(self) -> list[ToolSpec]:
        """The tools as the model sees them: built once (msgspec schemas are not free, and
        they are sent with every request)."""
        if self._specs is None:
            self._specs = self.tools.specs()
        return self._specs

    def provider(self, ctx: TurnContext, model_override: str | None = None) -> tuple[Provider, str]:
        """The provider for the session's model now (or `model_override`, a command's
        `model:` for its turn), and the model name.

        Raises ProviderError (kind "config") when it cannot be built, e.g. no API key."""
        config = ctx.config()
        model, provider_name = ctx.model()
        if model_override:
            model, provider_name = model_override, _provider_of(model_override, provider_name)
        if (model, provider_name) != (config.model, config.provider):
            config = msgspec.structs.replace(config, model=model, provider=provider_name)
        return self.provider_for_config(config)

    def provider_for_config(self, config: Config) -> tuple[Provider, str]:
        """The (cached) provider for `config`'s model; the warm-up builds it the same way."""
        from coder_ls.llm.factory import make_provider

        key = (config.provider, config.model if config.model == "scripted" else "", config.scripted_file or "")
        provider = self._providers.get(key)
        if provider is None:
            provider = make_provider(config, self.env, self.root)
            self._providers[key] = provider
        return provider, provider.catalog.resolve(config.model)

    def models(self, config: Config, current: str) -> ModelData:
        from coder_ls.llm.base import ProviderError
        from coder_ls.llm.catalog import ModelCatalog, model_data

        try:
            catalog = self.provider_for_config(config)[0].catalog
        except ProviderError:  # no API key: the built-in table
            catalog = ModelCatalog()
        return model_data(catalog, current, config.provider)

    async def check_model(self, ctx: TurnContext, provider: Provider, model: str) -> None:
        """Before a turn's first request: the client is built (the deprecation data read),
        the listing is refreshed in the background when stale, and a deprecated model gets
        its one warning (`window/showMessage`) with its end of life and replacement."""
        prepare = getattr(provider, "prepare", None)
        if prepare is not None:
            await prepare()  # what the first request waits for anyway
        self.refresh_models_soon(provider)
        warning = provider.catalog.take_warning(model)
        if warning:
            ctx.host.show_message("warning", warning)

    def refresh_models_soon(self, provider: Provider) -> asyncio.Task[None] | None:
        """List the account's models in the background (never on a turn's path)."""
        refresh = getattr(provider, "refresh_models", None)
        if refresh is None or not provider.catalog.stale() or self._refreshing is not None:
            return self._refreshing
        task = asyncio.get_running_loop().create_task(refresh())
        self._refreshing = task

        def done(_: asyncio.Task[None]) -> None:
            self._refreshing = None

        task.add_done_callback(done)
        return task

    async def run_turn(self, ctx: TurnContext, action: RunAgent) -> None:
        from coder_ls.agent.requestmsgs import RequestMessages
        from coder_ls.agent.turn import Turn
        from coder_ls.llm.base import ProviderError

        try:
            override = action.model

            def providers(c: TurnContext) -> tuple[Provider, str]:
                return self.provider(c, override)

            from coder_ls.agent.subagents import Subagents

            if action.fork is not None:
                await Subagents(self, ctx, depth=0, denied=action.grants).fork(action)
                return
            if action.task is not None:
                from coder_ls.agent.longtask import run_task

                await run_task(self, ctx, action.task)
                return
            await self.check_model(ctx, *self.provider(ctx, override))
            may_start = ctx.config().agents.max_depth >= 1
            skills = ctx.skills() or ctx.pending_skills()  # a conditional one may activate mid-turn
            planning = ctx.config().permissions == "plan"
            tools, specs = self.tools_for(
                skills,
                review=action.review,
                subagents=may_start,
                agents=ctx.agents(),
                planning=planning,
                config=ctx.config(),
                eyes=eyes_of(ctx.host),
            )
            if ctx.mcp is not None:
                from coder_ls.agent.tools.mcp import with_mcp_tools, with_mentions

                tools, specs = await with_mcp_tools(ctx, tools, specs)
                action = await with_mentions(ctx, action)

            def system(config: Config) -> str:
                return self.system(config, ctx.skills())

            runner = Subagents(self, ctx, depth=0, denied=action.grants) if may_start else None
            hooks = specs_of(action.hooks, action.hooks_source, "skill")  # the skill's own, this turn only
            kept = self._request_messages.get(ctx.session)
            if kept is None or kept.root != ctx.root:
                kept = self._request_messages[ctx.session] = RequestMessages(ctx.root)
            turn = Turn(
                ctx, tools, providers, specs, system=system, subagents=runner, hooks=hooks, request_messages=kept
            )
        except ProviderError as exc:
            ctx.result.fail("no_model" if exc.kind == "config" else exc.kind, exc.message)
            return
        await turn.run(action)

    async def side_question(self, ctx: TurnContext, question: str) -> None:
        from coder_ls.agent.aside import answer
        from coder_ls.llm.base import ProviderError

        b = ctx.result
        b.mode = "nl"
        try:
            provider, model = self.provider(ctx)
            skills = ctx.skills()
            subagents = ctx.config().agents.max_depth >= 1
            system, specs = (
                self.system(ctx.config(), skills),
                self.tools_for(
                    skills, subagents=subagents, agents=ctx.agents(), config=ctx.config(), eyes=eyes_of(ctx.host)
                )[1],
            )
            text, usage = await answer(ctx, provider, model, system, specs, question)
        except ProviderError as exc:
            b.fail("no_model" if exc.kind == "config" else exc.kind, exc.message, mode="nl")
            return
        b.reply = text or "(no answer)"
        b.data = usage

    async def context_report(self, ctx: TurnContext) -> None:
        from coder_ls.agent.context_report import context_report

        await context_report(self, ctx)

    async def compact(self, ctx: TurnContext, instructions: str, keep_last: int = 0, clear: bool = False) -> None:
        from coder_ls.agent.compact import apply_clear, apply_summary, split_exchanges, summarise
        from coder_ls.llm.base import ProviderError

        b = ctx.result
        if clear:  # the first level alone: no model call
            keep = ctx.config().compact.keep_tool_results
            cleared = apply_clear(ctx, keep)
            if cleared is None:
                b.reply = f"Nothing to clear: no long tool result or output is older than the last {keep} tool step(s)."
                return
            b.reply = (
                f"Compacted (level clear): {cleared.cleared} old tool results and outputs cleared, "
                f"{cleared.tokens_before:,} → {cleared.tokens_after:,} tokens (estimated)."
            )
            b.data = cleared
            return
        older, kept = split_exchanges(list(ctx.session.context), keep_last)
        if not older:
            b.reply = f"Nothing to compact: the context is no more than the last {keep_last} exchange(s)."
            return
        try:
            provider, model = self.provider(ctx)
            skills = ctx.skills()
            system = self.system(ctx.config(), skills)
            specs = self.tools_for(
                skills,
                subagents=ctx.config().agents.max_depth >= 1,
                agents=ctx.agents(),
                config=ctx.config(),
                eyes=eyes_of(ctx.host),
            )[1]
            summary = await summarise(ctx, provider, model, specs, instructions, system=system, messages=older)
        except ProviderError as exc:
            b.fail("no_model" if exc.kind == "config" else exc.kind, exc.message)
            return
        if not summary:
            b.fail("empty_summary", "The model returned no summary; the context was kept as it was.")
            return
        done = apply_summary(ctx, summary, kept)
        kept_note = f"; kept the last {keep_last} exchange(s) ({len(kept)} messages)" if kept else ""
        b.reply = (
            f"Compacted {done.messages_before} messages into a summary (level summary, "
            f"{done.tokens_before:,} → {done.tokens_after:,} tokens){kept_note}.\n\n{summary}"
        )
        b.data = done
