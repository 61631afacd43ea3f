"""The configuration: defaulted typed structs (camelCase keys on disk and wire)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

PositiveFloat = Annotated[float, msgspec.Meta(gt=0)]
PositiveInt = Annotated[int, msgspec.Meta(gt=0)]
NonNegativeInt = Annotated[int, msgspec.Meta(ge=0)]

Preset = Literal["strict", "balanced", "auto-edit", "yolo"]
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


class Config(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    model: str = "claude-sonnet-4-5"
    provider: str = "anthropic"
    permissions: Preset = "balanced"
    timezone: str = "Asia/Shanghai"
    max_steps: PositiveInt = 50
    shell: ShellConfig = msgspec.field(default_factory=ShellConfig)
    workflow: WorkflowConfig = msgspec.field(default_factory=WorkflowConfig)
    rules: list[Rule] = msgspec.field(default_factory=list)
    scripted_file: str | None = None  # provider "scripted": the file of turns to replay
    allow_outside_workspace: bool = False
    context_limit_tokens: PositiveInt = 200_000
    max_output_tokens: PositiveInt = 8192
    thinking_budget: NonNegativeInt = 0  # tokens of extended thinking per step; 0 = off
