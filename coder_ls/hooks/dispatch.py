"""Firing an event's hooks: the sources as they are now, the matching hooks run together,
their answers combined, every run shown (`hookRan`) and every failure said to the user.

`Hooks` is the engine's (one per workspace); `bound()` gives one submission's firer, the
callable the engine hands the agent (`TurnContext.hooks`): it fills in the session's
fields (`session_id`, `transcript_path`, `cwd`, `permission_mode`) and emits the
submission's events. A skill's or agent's own hooks come as `scoped` specs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import msgspec

from coder_ls.hooks.answers import combine, failure_text, interpret
from coder_ls.hooks.matcher import matches, valid
from coder_ls.hooks.records import NO_VERDICT, AnyHookEvent, HookEvent, Verdict, event_name, match_value
from coder_ls.hooks.runner import run_hook
from coder_ls.hooks.settings import HookProblem, HookSpec, load_hooks, plugin_hooks, signature, source_files
from coder_ls.hooks.toolmap import our_name
from coder_ls.protocol.events import Event, HookRan

Show = Callable[[str, str], None]  # (kind, message) to the user
_ENCODER = msgspec.json.Encoder()
PERMISSION_MODES = {
    "auto-edit": "acceptEdits",
    "yolo": "bypassPermissions",
    "strict": "default",
    "balanced": "default",
    "plan": "plan",  # Claude Code's name for its read-only planning mode
}


class Hooks:
    def __init__(
        self,
        root: Path,
        env: Mapping[str, str],
        *,
        trusted: Callable[[], bool],
        secrets: Callable[[], Iterable[str]],
        show: Show,
    ) -> None:
        self.root, self.env = root, env
        self._files = source_files(root, env)  # stat'd at each event: their paths made once
        self._trusted, self._secrets, self._show = trusted, secrets, show
        self._key: tuple[object, ...] | None = None
        self._specs: list[HookSpec] = []
        self._plugins: dict[str, list[HookSpec]] = {}
        self._said: set[str] = set()  # problems and notes said once each

    def add_plugin(self, plugin_root: Path) -> list[HookProblem]:
        """A plugin's hooks (its `hooks/hooks.json`) join the user's; its problems returned."""
        problems: list[HookProblem] = []
        self._plugins[str(plugin_root)] = plugin_hooks(plugin_root, problems)
        return problems

    def set_plugins(self, plugin_roots: list[Path]) -> None:
        """The enabled plugins' hooks, replacing the previous set (a disabled plugin's stop);
        each problem is said once."""
        self._plugins = {}
        for root in plugin_roots:
            for problem in self.add_plugin(root):
                self._once("warning", problem.describe())

    def specs(self) -> list[HookSpec]:
        """Every hook that may run now (sources re-read only when one changed)."""
        trusted = self._trusted()
        key = (trusted, signature(self._files))
        if key != self._key:
            self._key = key
            specs, problems, waiting = load_hooks(self.root, self.env, trusted=trusted)
            for p in problems:
                self._once("warning", p.describe())
            for s in specs:
                if not valid(s.matcher):
                    self._once("warning", f"coder: hooks in {s.source}: matcher {s.matcher!r} is not a valid regex")
            if waiting:
                self._once(
                    "info",
                    f"coder: this workspace has {waiting} hook(s) in .claude/ or .coder/config.json: "
                    "they run only after you trust it with /trust",
                )
            self._specs = specs
        return [*self._specs, *(s for specs in self._plugins.values() for s in specs)]

    def _once(self, kind: str, message: str) -> None:
        if message not in self._said:
            self._said.add(message)
            self._show(kind, message)

    def bound(
        self, session_id: str, transcript: str, emit: Callable[[Event], None], mode: Callable[[], str]
    ) -> BoundHooks:
        return BoundHooks(self, session_id, transcript, emit, mode)

    async def fire(self, event: HookEvent, emit: Callable[[Event], None], scoped: Sequence[HookSpec] = ()) -> Verdict:
        name = event_name(event)
        value = match_value(event)
        values = (value, our_name(value)) if value is not None else ()
        chosen: dict[str, HookSpec] = {}
        for spec in [*self.specs(), *scoped]:
            if spec.event == name and (value is None or matches(spec.matcher, *values)):
                chosen.setdefault(spec.command, spec)  # the same command twice runs once (Claude Code)
        if not chosen:
            return NO_VERDICT
        payload = _ENCODER.encode(event)
        secrets = tuple(self._secrets())
        runs = await asyncio.gather(*(run_hook(s, payload, self.root, secrets) for s in chosen.values()))
        verdicts = []
        for run in runs:
            verdict = interpret(name, run)
            verdicts.append(verdict)
            shown = "failed" if run.failed else verdict.decision
            emit(HookRan(event=name, name=run.spec.name, decision=shown, ms=run.ms))
            if run.failed:
                closed = " (failClosed: the action was blocked)" if run.spec.fail_closed else " (not blocking)"
                self._show("warning", f"coder: hook {run.spec.name!r} for {name} failed: {failure_text(run)}{closed}")
            for message in verdict.messages:
                self._show("info", message)
        return combine(verdicts)


class BoundHooks:
    """One submission's firer: `await hooks(event)`."""

    def __init__(
        self, hooks: Hooks, session_id: str, transcript: str, emit: Callable[[Event], None], mode: Callable[[], str]
    ) -> None:
        self.hooks, self.session_id, self.transcript, self.emit, self.mode = hooks, session_id, transcript, emit, mode

    async def __call__(self, event: AnyHookEvent, scoped: Sequence[HookSpec] = ()) -> Verdict:
        full = msgspec.structs.replace(
            event,
            session_id=self.session_id,
            transcript_path=self.transcript,
            cwd=str(self.hooks.root),
            permission_mode=PERMISSION_MODES.get(self.mode(), "default"),
        )
        return await self.hooks.fire(full, self.emit, scoped)

    def for_emit(self, emit: Callable[[Event], None]) -> BoundHooks:
        """The same firer reporting through `emit` (a subagent's, so its `hookRan` carries its id)."""
        return BoundHooks(self.hooks, self.session_id, self.transcript, emit, self.mode)


class NoHooks:
    """The firer where no hooks exist (headless tools, unit tests)."""

    async def __call__(self, event: AnyHookEvent, scoped: Sequence[HookSpec] = ()) -> Verdict:
        return NO_VERDICT

    def for_emit(self, emit: Callable[[Event], None]) -> NoHooks:
        return self


no_hooks = NoHooks()


class SessionHookState:
    """Per session (a session extension): whether SessionStart has fired, so SessionEnd
    fires only for sessions that started, and SessionStart's context waits for the prompt."""

    def __init__(self) -> None:
        self.started = False
