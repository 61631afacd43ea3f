"""What every tool shares: the context it runs in, its typed input, its output, the registry."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import msgspec

from coder_ls.agent.grants import SessionGrants
from coder_ls.agent.paths import PathError, display_path, resolve_path, skill_file
from coder_ls.attribution.agentlines import AgentLines
from coder_ls.engine.agent_api import SkillInfo, _no_skills
from coder_ls.engine.host import Host
from coder_ls.fsutil import ANYWHERE
from coder_ls.guard.redact import Redactor
from coder_ls.llm.base import ToolSpec
from coder_ls.protocol.config import Config
from coder_ls.protocol.edits import Finding
from coder_ls.protocol.events import Event, TodoItem
from coder_ls.protocol.messages import ImageBlock
from coder_ls.protocol.wiretext import carried

log = logging.getLogger(__name__)


class ToolError(Exception):
    """A failure the model should see as the tool's (error) result."""


class ToolOutput(msgspec.Struct, frozen=True):
    text: str
    is_error: bool = False
    images: tuple[ImageBlock, ...] = ()  # shown to the model with the text (`read` of an image)
    unsaved: bool = False  # the text came from an editor buffer that differs from the disk (section 23)


class ShellResultLike(Protocol):
    """What `PersistentShell.run` returns (`coder_ls.engine.shell.ShellResult`)."""

    @property
    def output(self) -> str: ...
    @property
    def exit_code(self) -> int | None: ...
    @property
    def truncated(self) -> bool: ...
    @property
    def timed_out(self) -> bool: ...


class ShellLike(Protocol):
    """The session's agent shell (`coder_ls.engine.agentshell.AgentShell`)."""

    def run(
        self,
        command: str,
        *,
        on_output: Callable[[str], None],
        timeout: float,
        max_output_bytes: int,
    ) -> Awaitable[ShellResultLike]: ...


def _no_emit(event: Event) -> None:
    return None


def _no_report(message: str) -> None:
    return None


class SubagentRunner(Protocol):
    async def __call__(self, ctx: ToolContext, call_id: str, jobs: Sequence[tuple[str, str]], chain: bool) -> str:
        """Run subagents `(agent name, prompt)` for the `task` call `call_id`: in parallel,
        or one after another (`chain`, `{previous}` replaced); their labelled answers."""
        ...


@dataclass
class ToolContext:
    """Everything a tool may touch. The session builds one per turn (or per call).

    `emit` stamps and sends an event; `report` puts a line on the submission's
    progress; `todos` is the session's list (todoWrite replaces its contents);
    `changed_paths` collects the absolute paths the turn wrote (for auto-verify);
    `grants` are the session's "Allow for session" grants; `call_id` is the id of
    the tool call being run (for approval events); `review_edit`: the tool whose
    edit is itself the approval question (`agent/review.py`).
    """

    root: Path
    config: Config
    host: Host
    shell: ShellLike | None = None
    emit: Callable[[Event], None] = _no_emit
    report: Callable[[str], None] = _no_report
    todos: list[TodoItem] = field(default_factory=list)
    changed_paths: set[str] = field(default_factory=set)
    grants: SessionGrants = field(default_factory=SessionGrants)
    call_id: str = ""
    review_edit: str | None = None  # the tool whose edit goes to the editor for review (section 15)
    skills: Callable[[], Sequence[SkillInfo]] = _no_skills  # the model-invocable skills now
    used_skills: dict[str, str] = field(default_factory=dict)  # the session's loaded skills: name -> text
    findings: list[Finding] = field(default_factory=list)  # what /review's turn reported so far
    actor: str = "Coder"  # who asks in approval questions ("Coder (subagent explore)")
    run_subagents: SubagentRunner | None = None  # the `task` tool's way to start subagents
    # (command, shell cwd) the policy has just checked and allowed, with nothing run or awaited
    # since: the bash tool does not check it a second time (set by the turn, never by input)
    checked: tuple[str, Path | None] | None = None
    # the call was allowed only because the sandbox runs it (`sandbox.autoAllow`): the bash
    # tool refuses to run it without one (set by the pipeline, never by input)
    sandbox_required: bool = False
    submission_id: str = ""  # the submission this turn runs for (`ask_user` names it to the client)
    proposed_plan: str | None = None  # plan mode: what `exit_plan_mode` handed over (set by the tool)
    # the session's record of the lines the agent wrote (code lenses, the user's changes to them)
    agent_lines: AgentLines | None = None
    subagent: str | None = None  # the subagent this turn runs as (its definition's name)

    def resolve(self, raw: str) -> Path:
        """A path the model named, inside the workspace (or a `PathError`)."""
        return resolve_path(self.root, raw, allow_outside=self.config.allow_outside_workspace)

    @property
    def write_root(self) -> Path:
        """What bounds the tools' writes (`fsutil.write_atomic`, and the edge's checks around
        an edit the editor applies): the workspace, unless the user let the file tools reach
        outside it (`allowOutsideWorkspace`), where their links lead."""
        return ANYWHERE if self.config.allow_outside_workspace else self.root

    def skill_dirs(self) -> list[Path]:
        """The folders of the user's and plugins' skills: the read tools may read them (a
        skill ships scripts and references there); a workspace's skills are inside it."""
        return [s.skill_dir for s in self.skills() if s.skill_dir is not None and s.origin != "workspace"]

    def resolve_read(self, raw: str) -> Path:
        """`resolve`, or a path inside one of `skill_dirs()` (for the read tools only)."""
        try:
            return self.resolve(raw)
        except PathError:
            inside = skill_file(raw, self.skill_dirs())
            if inside is None:
                raise
            return inside

    def rel(self, path: Path) -> str:
        return display_path(self.root, path)


def _inline(node: Any, defs: Mapping[str, Any], depth: int = 0) -> Any:
    if depth > 20:
        return node
    if isinstance(node, list):
        return [_inline(v, defs, depth + 1) for v in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        merged = dict(defs[ref.removeprefix("#/$defs/")])
        merged.update({k: v for k, v in node.items() if k != "$ref"})
        return _inline(merged, defs, depth + 1)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("$defs", "title"):
            continue
        out[key] = _inline(value, defs, depth + 1)
    any_of = out.get("anyOf")
    if isinstance(any_of, list):
        # `X | None = None`: optional already (not required), so just X.
        non_null = [s for s in any_of if s != {"type": "null"}]
        if len(non_null) == 1 and len(non_null) < len(any_of):
            del out["anyOf"]
            out = {**non_null[0], **out}
            if out.get("default", 0) is None:
                del out["default"]
    return out


def clean_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A msgspec JSON schema as one plain object schema: refs inlined, no $defs, no titles."""
    defs = schema.get("$defs", {})
    result = _inline(dict(schema), defs)
    result.setdefault("type", "object")
    result.setdefault("properties", {})
    result.setdefault("required", [])
    return dict(result)


InputT = TypeVar("InputT", bound=msgspec.Struct)
Handler = Callable[[ToolContext, InputT], Awaitable[ToolOutput]]


@dataclass(frozen=True)
class Tool(Generic[InputT]):
    """A tool: a name, a description, a typed input and an async handler."""

    name: str
    description: str
    input_type: type[InputT]
    handler: Handler[InputT]

    def json_schema(self) -> dict[str, Any]:
        return clean_schema(msgspec.json.schema(self.input_type))

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.json_schema())

    def parse(self, raw: Any) -> InputT:
        """The model's input (a dict) as the typed struct, or a `ToolError` saying what is wrong."""
        if isinstance(raw, self.input_type):
            return raw
        try:
            return msgspec.convert(raw, self.input_type)
        except msgspec.ValidationError as exc:
            raise ToolError(f"invalid input for {self.name}: {exc}") from exc

    async def run(self, ctx: ToolContext, input: InputT) -> ToolOutput:
        """Run with typed input; tool and path errors become error outputs. No secret
        value leaves here (`guard.redact`), nor a text UTF-8 cannot carry: this is where
        every tool's result enters the session, whatever the tool read."""
        try:
            output = await self.handler(ctx, input)
        except (ToolError, PathError) as exc:
            output = ToolOutput(str(exc), is_error=True)
        except OSError as exc:
            output = ToolOutput(f"{self.name} failed: {exc}", is_error=True)
        except Exception as exc:  # a bug in a tool must not end the turn
            log.exception("tool %s failed", self.name)
            output = ToolOutput(f"{self.name} failed unexpectedly: {type(exc).__name__}: {exc}", is_error=True)
        # A name that is not UTF-8 leaves as `\xNN` (`protocol/wiretext.py`): the session log,
        # the provider's request and the client could not carry it as it is.
        text = carried(output.text)
        redactor = Redactor.for_names(ctx.config.secrets.env_names)
        if redactor:
            text = redactor.text(text)
        return output if text is output.text else msgspec.structs.replace(output, text=text)

    async def call(self, ctx: ToolContext, raw: Any) -> ToolOutput:
        """Parse the model's raw input, then run (cancellation propagates)."""
        try:
            parsed = self.parse(raw)
        except ToolError as exc:
            return ToolOutput(str(exc), is_error=True)
        return await self.run(ctx, parsed)


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool[Any]] = ()) -> None:
        self._tools: dict[str, Tool[Any]] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool[Any]) -> None:
        if tool.name in self._tools:
            raise ValueError(f"duplicate tool {tool.name!r}")
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool[Any] | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[ToolSpec]:
        return [t.spec() for t in self._tools.values()]

    def subset(self, names: Iterable[str] | None) -> ToolRegistry:
        """Only the tools named (an agent's allowlist); None keeps them all."""
        if names is None:
            return ToolRegistry(self._tools.values())
        wanted = set(names)
        return ToolRegistry(t for t in self._tools.values() if t.name in wanted)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool[Any]]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)
