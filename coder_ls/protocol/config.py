"""The configuration: defaulted typed structs (camelCase keys on disk and wire)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

PositiveFloat = Annotated[float, msgspec.Meta(gt=0)]
PositiveInt = Annotated[int, msgspec.Meta(gt=0)]
NonNegativeInt = Annotated[int, msgspec.Meta(ge=0)]

# `plan` (contract section 22): read, search and ask, never write, until a plan is approved;
# a session enters it with `/plan`, so it is not among the presets `/permissions` applies
Preset = Literal["strict", "balanced", "auto-edit", "yolo", "plan"]
PLAN: Preset = "plan"
ThinkingMode = Literal["auto", "adaptive", "enabled", "off"]
Effort = Literal["low", "medium", "high", "xhigh", "max"]
PRESETS: tuple[str, ...] = ("strict", "balanced", "auto-edit", "yolo")


class Rule(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    """A permission rule: `tool` plus an optional command prefix, path glob or domain."""

    tool: str
    action: Literal["allow", "ask", "deny"]
    command: str | None = None  # prefix of a shell command (tool "bash")
    path: str | None = None  # glob relative to the workspace root (file tools)
    # a host name (`docs.python.org`), its sub-domains (`*.python.org`) or an IP address (the web
    # tools, contract section 22); checked like `sandbox.network`'s entries (`domain_problem`)
    domain: str | None = None

    def __post_init__(self) -> None:
        if self.domain is not None and (problem := domain_problem(self.domain)) is not None:
            raise ValueError(f"not a domain rule: {problem}")


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


def domain_problem(entry: object) -> str | None:
    """Why `entry` is not a domain rule (`example.com`, `*.example.com`, an IP address), or None."""
    if not isinstance(entry, str):
        return f"{entry!r} is not a string"
    if not entry.strip():
        return "an empty entry"
    if any(c.isspace() for c in entry):
        return f"{entry!r} holds a space"
    if "://" in entry:
        return f"{entry!r} has a scheme: write the host name alone"
    if "/" in entry or "?" in entry or "#" in entry:
        return f"{entry!r} has a path: write the host name alone"
    if "@" in entry:
        return f"{entry!r} has a user name: write the host name alone"
    if not entry.isascii():
        return f"{entry!r} is not ASCII: write the name as IDNA (xn--...)"
    import ipaddress

    bare = entry[1:-1] if entry.startswith("[") and entry.endswith("]") else entry
    try:
        ipaddress.ip_address(bare)
        return None
    except ValueError:
        pass
    if ":" in entry:
        return f"{entry!r} has a port: domains are allowed on every port"
    name = entry[2:] if entry.startswith("*.") else entry
    if "*" in name:
        return f"{entry!r}: `*` is only allowed as a leading `*.` (use `network: true` for every domain)"
    name = name[:-1] if name.endswith(".") else name
    labels = name.split(".")
    if len(name) > 253 or not all(0 < len(x) <= 63 for x in labels):
        return f"{entry!r} is not a host name"
    if not all(c.isalnum() or c in "-_" for x in labels for c in x):
        return f"{entry!r} is not a host name"
    return None


class NetworkDomains(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    """`sandbox.network` by domain: sandboxed commands reach only these names, through the
    server's proxy (`guard/netproxy.py`). `*.example.com` matches the sub-domains of
    example.com; a denied entry wins; an IP address is reached only when listed; nothing
    allowed is the same as no network."""

    allowed_domains: tuple[str, ...] = ()
    denied_domains: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for entry in (*self.allowed_domains, *self.denied_domains):
            problem = domain_problem(entry)
            if problem is not None:
                raise ValueError(f"not a domain rule: {problem}")


class SandboxConfig(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    """The OS sandbox of the agent's shell (bash tool, auto-verify); `!cmd` is never sandboxed."""

    mode: SandboxMode = "workspace-write"
    # false: no network; true: all of it; domains: only those, through the server's proxy
    network: bool | NetworkDomains = False
    writable_roots: list[str] = msgspec.field(default_factory=list)  # absolute, or relative to the workspace
    # A bash call the preset would ask about runs unasked when the sandbox will run it and can
    # hold it (contract section 20); a workspace may turn this off, never on (guard/trust.py).
    auto_allow: bool = True


class SecretsConfig(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    """Environment variables removed from every child process and redacted from logs."""

    env_names: list[str] = msgspec.field(default_factory=list)


class InstructionsConfig(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    max_bytes: PositiveInt = 40_000  # the project instruction files together, in the system prompt


class AgentsConfig(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    max_concurrency: PositiveInt = 3  # subagents of one `task` call running at once
    max_depth: NonNegativeInt = 1  # how deep subagents may start subagents (1: only the main agent)


class LocalExecutor(msgspec.Struct, tag="local", tag_field="kind", rename="camel", forbid_unknown_fields=True):
    """A `/task`'s steps run in this server, as subagents (the default)."""


class RayExecutor(msgspec.Struct, tag="ray", tag_field="kind", rename="camel", forbid_unknown_fields=True):
    """A `/task`'s steps run as tasks on an existing Ray cluster (contract section 25,
    `coder_ls/remote/`). The API key never travels in a task's arguments nor in the job's
    runtime environment as a value (Ray writes that to the cluster's logs): the worker nodes
    hold it in their own environment, and `runtimeEnv.env_vars` may name it by reference,
    `{"ANTHROPIC_API_KEY": "${CLUSTER_SECRET_NAME}"}` (Ray expands it on the node)."""

    address: Annotated[str, msgspec.Meta(min_length=1)]  # "host:6379", "ray://host:10001" or "auto"
    runtime_env: dict[str, Any] = msgspec.field(default_factory=dict)  # pip, working_dir, env_vars...
    permissions: Literal["strict", "balanced", "auto-edit", "yolo"] = "auto-edit"  # a worker's preset
    num_cpus: PositiveFloat = 1.0  # the CPUs each step's Ray task reserves


class TasksConfig(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    max_concurrency: PositiveInt = 3  # steps of a /task running at once
    max_retries: NonNegativeInt = 2  # more attempts of a step that failed on a retryable error
    default_budget: PositiveInt = 500_000  # tokens a /task may use before it pauses
    # "worktree": each step that may write runs in a git worktree of its own (section 25)
    isolation: Literal["none", "worktree"] = "none"
    executor: LocalExecutor | RayExecutor = msgspec.field(default_factory=LocalExecutor)  # where steps run


HookEventName = Literal[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
    "Notification",
]


class HookCommand(msgspec.Struct, frozen=True, rename="camel"):
    """One hook in Claude Code's format (`type: "command"`), plus `failClosed`: its failure
    (a crash, an exit other than 0 and 2, a timeout) blocks instead of letting the action through."""

    type: Literal["command"]
    command: str
    timeout: PositiveFloat | None = None  # seconds (default 60)
    fail_closed: bool = False


class HookGroup(msgspec.Struct, frozen=True):
    hooks: list[HookCommand]
    matcher: str = ""


class McpServerConfig(msgspec.Struct, forbid_unknown_fields=True):
    """One entry of `mcpServers` (the shape Claude Code writes): stdio (`command`, `args`,
    `env`) or HTTP (`type: "http"`, `url`, `headers`); `${VAR}` expanded (coder_ls/mcp/config.py)."""

    type: Literal["stdio", "http", "sse", "streamable-http", "streamableHttp"] | None = None
    command: str | None = None
    args: list[str] = msgspec.field(default_factory=list)
    env: dict[str, str] = msgspec.field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str] = msgspec.field(default_factory=dict)


class InputConfig(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    """What comes with a prompt (contract section 19)."""

    max_attachment_bytes: PositiveInt = 100_000  # each `@file`, range or listing, cut with a note
    paste_threshold: PositiveInt = 4_000  # a longer paste shows as `[Pasted text #N, L lines]`


class CompactConfig(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    """Compaction's first level (`agent/compact_clear.py`): the results of the tool calls of
    the last `keep_tool_results` model steps are kept whole; older ones are cleared."""

    keep_tool_results: NonNegativeInt = 3


class ModelPrice(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    """US dollars per million tokens (`/cost`'s estimate)."""

    input: Annotated[float, msgspec.Meta(ge=0)]
    output: Annotated[float, msgspec.Meta(ge=0)]
    cache_read: Annotated[float, msgspec.Meta(ge=0)] = 0.0
    cache_write: Annotated[float, msgspec.Meta(ge=0)] = 0.0


def default_pricing() -> dict[str, ModelPrice]:
    """Anthropic's list prices (docs.anthropic.com/en/docs/about-claude/pricing, 5-minute cache
    writes), keyed by model id prefix: the longest prefix of a model's id wins."""
    opus_old = ModelPrice(input=15.0, output=75.0, cache_read=1.5, cache_write=18.75)
    return {
        "claude-opus": ModelPrice(input=5.0, output=25.0, cache_read=0.5, cache_write=6.25),
        "claude-opus-4-0": opus_old,
        "claude-opus-4-1": opus_old,
        "claude-opus-4-2025": opus_old,
        "claude-sonnet": ModelPrice(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75),
        "claude-haiku": ModelPrice(input=1.0, output=5.0, cache_read=0.1, cache_write=1.25),
        "claude-3-5-haiku": ModelPrice(input=0.8, output=4.0, cache_read=0.08, cache_write=1.0),
        "claude-3-haiku": ModelPrice(input=0.25, output=1.25, cache_read=0.03, cache_write=0.3),
    }


class CommandsConfig(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    """Slash commands (contract section 18): `disabled` names commands that cannot run
    (listed with `available: false` and the reason)."""

    disabled: list[str] = msgspec.field(default_factory=list)


class AgentConfig(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    """`agent.follow`: open each file the agent edits in the editor (`window/showDocument`,
    `takeFocus: false`), so the user follows along (contract section 22)."""

    follow: bool = False


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
    # Build the provider while the server idles after start-up (its HTTP client, and the
    # account's models listed in the background). CODER_WARMUP overrides.
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
    # Send the API key to an `http://` base URL on another host (in clear): off, refused
    # with a message (coder_ls/llm/anthropic_http.py, `insecure_base_url`).
    allow_insecure_base_url: bool = False
    # Hooks in Claude Code's format. Validated here with the rest; `coder_ls/hooks` runs them
    # per file (the user's and, once trusted, the workspace's: every source's run, none replaces another's).
    hooks: dict[HookEventName, list[HookGroup]] = msgspec.field(default_factory=dict)
    # MCP servers of the user (section "MCP servers"); a workspace's are `.mcp.json`, after /trust
    mcp_servers: dict[str, McpServerConfig] = msgspec.field(default_factory=dict)
    input: InputConfig = msgspec.field(default_factory=InputConfig)
    # `/cost`: dollars per million tokens by model id prefix (replaces the defaults when set)
    pricing: dict[str, ModelPrice] = msgspec.field(default_factory=default_pricing)
    compact: CompactConfig = msgspec.field(default_factory=CompactConfig)
    commands: CommandsConfig = msgspec.field(default_factory=CommandsConfig)
    agent: AgentConfig = msgspec.field(default_factory=AgentConfig)
