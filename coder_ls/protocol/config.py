"""The configuration: defaulted typed structs (camelCase keys on disk and wire)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

PositiveFloat = Annotated[float, msgspec.Meta(gt=0)]
PositiveInt = Annotated[int, msgspec.Meta(gt=0)]
NonNegativeInt = Annotated[int, msgspec.Meta(ge=0)]

Preset = Literal["strict", "balanced", "auto-edit", "yolo"]
ThinkingMode = Literal["auto", "adaptive", "enabled", "off"]
Effort = Literal["low", "medium", "high", "xhigh", "max"]
PRESETS: tuple[str, ...] = ("strict", "balanced", "auto-edit", "yolo")


class Rule(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    """A permission rule: `tool` plus an optional command prefix or path glob."""

    tool: str
    action: Literal["allow", "ask", "deny"]
    command: str | None = None  # prefix of a shell command (tool "bash")
    path: str | None = None  # glob relative to the workspace root (file tools)


class ShellConfig(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    timeout_seconds: PositiveFloat = 120.0
    max_output_bytes: PositiveInt = 64 * 1024


class WorkflowConfig(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    auto_verify_after_edit: bool = True
    verify_commands: list[str] = msgspec.field(default_factory=list)
    max_verify_attempts: NonNegativeInt = 2


class ApprovalsConfig(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    # An approval question left unanswered this long is denied as if dismissed.
    timeout_seconds: PositiveFloat = 300.0


SandboxMode = Literal["workspace-write", "read-only", "off"]


class SandboxConfig(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    """The OS sandbox of the agent's shell (bash tool, auto-verify); `!cmd` is never sandboxed."""

    mode: SandboxMode = "workspace-write"
    network: bool = False
    writable_roots: list[str] = msgspec.field(default_factory=list)  # absolute, or relative to the workspace


class SecretsConfig(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    """Environment variables removed from every child process and redacted from logs."""

    env_names: list[str] = msgspec.field(default_factory=list)


class InstructionsConfig(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    max_bytes: PositiveInt = 40_000  # the project instruction files together, in the system prompt


class AgentsConfig(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    max_concurrency: PositiveInt = 3  # subagents of one `task` call running at once
    max_depth: NonNegativeInt = 1  # how deep subagents may start subagents (1: only the main agent)


class TasksConfig(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    max_concurrency: PositiveInt = 3  # steps of a /task running at once
    max_retries: NonNegativeInt = 2  # more attempts of a step that failed on a retryable error
    default_budget: PositiveInt = 500_000  # tokens a /task may use before it pauses


class CommandsConfig(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    """Slash commands (contract section 18): `disabled` names commands that cannot run
    (listed with `available: false` and the reason)."""

    disabled: list[str] = msgspec.field(default_factory=list)


class Config(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    model: str = "sonnet"  # an alias: the newest Sonnet the account can use (coder_ls.llm.catalog)
    provider: str = "anthropic"
    permissions: Preset = "balanced"
    timezone: str = "Asia/Shanghai"
    max_steps: PositiveInt = 50
    shell: ShellConfig = msgspec.field(default_factory=ShellConfig)
    workflow: WorkflowConfig = msgspec.field(default_factory=WorkflowConfig)
    instructions: InstructionsConfig = msgspec.field(default_factory=InstructionsConfig)
    agents: AgentsConfig = msgspec.field(default_factory=AgentsConfig)
    tasks: TasksConfig = msgspec.field(default_factory=TasksConfig)
    rules: list[Rule] = msgspec.field(default_factory=list)
    approvals: ApprovalsConfig = msgspec.field(default_factory=ApprovalsConfig)
    sandbox: SandboxConfig = msgspec.field(default_factory=SandboxConfig)
    secrets: SecretsConfig = msgspec.field(default_factory=SecretsConfig)
    scripted_file: str | None = None  # provider "scripted": the file of turns to replay
    # Build the provider while the server idles after start-up (the first turn then does
    # not wait ~1 s for the SDK; the idle server holds ~50 MB more). CODER_WARMUP overrides.
    warmup: bool = True
    allow_outside_workspace: bool = False
    context_limit_tokens: PositiveInt = 200_000
    # Model requests (fitted to the model, see coder_ls/llm/request_plan.py):
    max_output_tokens: PositiveInt | None = None  # None: the model's output limit, capped at 32,000
    thinking: ThinkingMode = "auto"  # auto | adaptive | enabled (a token budget) | off
    thinking_budget: NonNegativeInt = 0  # budget of "enabled" thinking per step; 0 = the default (8,192)
    effort: Effort | None = None  # output_config.effort where the model takes it; None = its default
    # The longest silence on a model request (no byte of the response) before it is given
    # up as stalled and retried; from 10 s of silence on, the progress says so.
    request_timeout_seconds: PositiveFloat = 120.0
    commands: CommandsConfig = msgspec.field(default_factory=CommandsConfig)
