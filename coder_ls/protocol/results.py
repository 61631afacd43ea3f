"""The result every command returns, and the typed `data` payloads."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from coder_ls.protocol.base import Wire

Mode = Literal["nl", "raw", "command", "error"]
Status = Literal["completed", "cancelled", "failed"]


class ErrorInfo(Wire):
    code: str
    message: str


class Tagged(Wire, tag_field="kind"):
    """Base of `data` payloads; `kind` names which one it is."""


class Activation(Wire, omit_defaults=True):
    """A conditional skill (`paths:` in its front matter): offered to the model once the
    session touches a file matching one glob; `by` is the file that activated it."""

    paths: list[str]
    active: bool
    by: str | None = None


class CommandInfo(Wire, omit_defaults=True):
    """One entry of the catalog. `path` (where a file command is defined),
    `userInvocable` (files) and `modelInvocable` (skills) are left out when absent.
    The command model's fields (contract section 18) are left out at their defaults."""

    name: str
    description: str
    argument_hint: str
    kind: Literal["local", "prompt", "agent"]
    source: Literal["builtin", "workspace", "user", "skill", "plugin", "bundled", "managed", "mcp"]
    path: str | None = None
    user_invocable: bool | None = None
    model_invocable: bool | None = None
    shadows: list[str] | None = None  # what this entry hides: files (or built-ins) of the same name
    namespace: str | None = None  # the sub-folder of `/dev:review`, or the plugin of `/plugin:name`
    aliases: list[str] = msgspec.field(default_factory=list)
    hidden: bool = False
    available: bool = True
    reason: str | None = None  # why it is not available now
    immediate: bool = False  # runs at once, even while a turn of the session runs
    sensitive: bool = False  # its arguments are shown as *** everywhere
    progress_message: str | None = None
    when_to_use: str | None = None
    arguments: list[str] = msgspec.field(default_factory=list)
    effort: str | None = None
    activation: Activation | None = None


class CommandCatalog(Tagged, tag="commands"):
    commands: list[CommandInfo]


class SessionInfo(Wire):
    id: str
    title: str
    updated_at: str  # ISO 8601 in the configured timezone
    updated: str  # human form, e.g. "2026-11-22 11:03 (Asia/Shanghai)"
    message_count: int
    current: bool = False


class SessionList(Tagged, tag="sessions"):
    sessions: list[SessionInfo]
    timezone: str


class HistoryItem(Wire):
    """One message of a session as a transcript shows it."""

    role: Literal["user", "assistant"]
    text: str
    tools: list[str] = msgspec.field(default_factory=list)  # tools the assistant called


class ResumedSession(Tagged, tag="resumed"):
    session: SessionInfo
    message_count: int
    history: list[HistoryItem] = msgspec.field(default_factory=list)  # the last messages, oldest first


class ModelInfo(Wire):
    name: str
    provider: str
    description: str = ""
    display_name: str = ""  # the Models API's name for it ("" when it did not say)
    family: str = ""  # its line: "sonnet", "opus", "haiku", "fable" ("" for none)
    context_window: int | None = None
    max_output_tokens: int | None = None
    deprecated: bool = False
    end_of_life: str | None = None  # ISO date, for a deprecated model that has one
    replacement: str | None = None  # the model to switch to, for a deprecated one


class ModelData(Tagged, tag="model"):
    current: str
    provider: str
    models: list[ModelInfo]
    resolved: str = ""  # the model id `current` stands for (an alias such as "sonnet" resolved)
    source: Literal["api", "builtin"] = "builtin"  # the account's Models API listing, or the built-in table


class RuleInfo(Wire):
    tool: str
    action: Literal["allow", "ask", "deny"]
    command: str | None = None
    path: str | None = None
    domain: str | None = None  # a web tool's rule or grant (contract section 22)


PermissionSource = Literal["user", "workspace", "session", "managed", "editor"]


class PermissionEntry(Wire, omit_defaults=True):
    """One rule or session grant in force (`/permissions`, contract section 22): `index` is
    what `/permissions revoke N` takes; `source` where it comes from: the user's file, the
    workspace's `.coder/config.json`, an "Allow for session" of this session, the
    administrator's managed file (never revoked), or the editor's settings
    (`initializationOptions`, `didChangeConfiguration`: changed there)."""

    index: int
    source: PermissionSource
    tool: str
    action: Literal["allow", "ask", "deny"]
    command: str | None = None
    path: str | None = None
    domain: str | None = None  # a web tool's rule or grant


class PermissionsData(Tagged, tag="permissions"):
    preset: str
    presets: list[str]
    rules: list[RuleInfo]
    entries: list[PermissionEntry] = msgspec.field(default_factory=list)


class FileChange(msgspec.Struct, rename="camel", kw_only=True):
    """One file of `/diff turn`, whole, for a client's diff editor (text files only)."""

    path: str
    before: str | None  # None: it did not exist
    after: str | None  # None: it was removed


class DiffData(Tagged, tag="diff"):
    stat: str
    diff: str
    files: list[str]
    # `/diff turn [N]` (contract section 19): the submission shown
    submission: int | None = None
    submission_id: str | None = None
    changes: list[FileChange] | None = None  # `/diff turn`: the text files before and after


class UndoData(Tagged, tag="undo"):
    restored: list[str]
    removed: list[str]
    submission_id: str | None = None
    # paths kept because they changed since the submission (on disk, or in the editor while it ran)
    conflicts: list[str] = msgspec.field(default_factory=list)


class RevertData(Tagged, tag="revertHunk"):
    """`coder.revertHunk`: the lines put back (1-based, inclusive) and who had written them."""

    path: str
    start_line: int
    end_line: int
    submission_id: str


class HelpData(Tagged, tag="help"):
    commands: list[CommandInfo]


class SessionData(Tagged, tag="session"):
    """After /new or /clear: the session that is now current."""

    session: SessionInfo
    previous_session_id: str | None = None


class InterruptData(Tagged, tag="interrupt"):
    cancelled_submissions: list[str]
    cancelled_agents: list[str] = msgspec.field(default_factory=list)


class CompactedData(Tagged, tag="compacted"):
    summary: str
    messages_before: int
    level: Literal["clear", "summary"] = "summary"  # see events.ContextCompacted
    tokens_before: int | None = None
    tokens_after: int | None = None
    cleared: int | None = None  # level "clear": how many tool results and outputs were cleared


class AgentInfo(msgspec.Struct, rename="camel", kw_only=True):
    name: str
    description: str
    tools: list[str] | None  # None: every tool
    model: str | None
    source: str  # builtin | workspace | user


class AgentsData(Tagged, tag="agents"):
    """`/agents`: the subagent definitions (contract section 13)."""

    agents: list[AgentInfo]


class TaskStepInfo(msgspec.Struct, rename="camel", kw_only=True):
    id: str
    title: str
    status: str
    attempts: int
    tokens: int
    # where the step ran (contract section 25): "local", "worktree" or "ray:<node ip>/<node id>"
    where: str = "local"


class TaskData(Tagged, tag="task"):
    """`/task status` (and a task's result): contract section 14."""

    id: str
    goal: str
    status: str
    steps: list[TaskStepInfo]
    completed: int
    failed: int
    skipped: int
    total: int
    percentage: int
    tokens_used: int
    budget: int
    elapsed_seconds: float
    eta_seconds: float | None = None
    report: str | None = None


class TaskList(Tagged, tag="tasks"):
    tasks: list[TaskData]


class WorktreeInfo(msgspec.Struct, rename="camel", kw_only=True):
    id: str
    label: str  # which step ("general: fix the parser")
    reason: str  # why it was kept ("its patch was conflict", "the step failed")
    path: str  # the step's root in the worktree (open it there)
    created: float


class WorktreesData(Tagged, tag="worktrees"):
    """`/worktrees` (contract section 25): the isolated steps' worktrees kept after they did
    not land; `dropped`: the ids `/worktrees drop` just removed."""

    worktrees: list[WorktreeInfo]
    dropped: list[str] = msgspec.field(default_factory=list)


class UsageData(Tagged, tag="usage"):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    steps: int = 0


class McpServerInfo(msgspec.Struct, rename="camel", kw_only=True):
    """One MCP server as `/mcp` shows it. `state`: stopped | starting | ready | restarting |
    failed | untrusted (a workspace's server waiting for /trust)."""

    name: str
    origin: str  # user | workspace | plugin
    transport: str  # stdio | http | sse
    state: str
    tools: list[str] = msgspec.field(default_factory=list)
    prompts: list[str] = msgspec.field(default_factory=list)
    resources: int = 0
    last_error: str = ""
    source: str = ""


class McpData(Tagged, tag="mcp"):
    """`/mcp`: each MCP server's status, tools and last error; the configuration's problems."""

    servers: list[McpServerInfo]
    problems: list[str] = msgspec.field(default_factory=list)


class InputData(Tagged, tag="input"):
    """A prompt that was not run (`bad_image`, ...): the input as sent, so nothing is lost."""

    input: str
    images: int = 0  # how many images came with it


class CompletionItem(Wire, omit_defaults=True):
    """One completion: `label` replaces `text[start:position]` (a folder ends in `/`)."""

    label: str
    kind: Literal["command", "file", "agent"]
    detail: str | None = None


class Completions(Tagged, tag="completions"):
    """`coder.completeInput`: the items, best first, and where the completed word starts
    (the offset of its `@` or `/`); `items` is empty when the word is neither."""

    items: list[CompletionItem]
    start: int
    incomplete: bool = False  # more matched than were returned: ask again as the user types


class ContextPart(msgspec.Struct, rename="camel", kw_only=True):
    name: str  # system, instructions, tools, skills, agents, mcp, messages, images
    tokens: int


class ContextData(Tagged, tag="context"):
    """`/context`: what fills the model context (contract section 19). `source`: "api" when
    the provider's token counting counted it, else "estimate" (characters / 4)."""

    parts: list[ContextPart]
    total: int
    window: int
    percent: float  # of the window, one decimal
    source: Literal["api", "estimate"]
    model: str
    last_response_tokens: int | None = None  # what the last model response reported (input + output)
    note: str | None = None  # why it is an estimate, when counting failed


class TokenTally(msgspec.Struct, rename="camel", kw_only=True):
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    usd: float | None = None  # None: no price for (one of) the models used


class CostData(Tagged, tag="cost"):
    """`/cost` (alias `/usage`): tokens of the session and of its last turn; `usd` is an
    estimate from the configuration's `pricing`."""

    session: TokenTally
    last_turn: TokenTally
    models: list[str]
    estimate: bool = True


class ShellEntry(msgspec.Struct, rename="camel", kw_only=True):
    """One of the agent's background shells (contract section 22). `state`: running |
    exited | killed; `runtime` in seconds; `exitCode` once it ended."""

    shell_id: str
    command: str
    state: str
    runtime: float
    exit_code: int | None = None


class ShellsData(Tagged, tag="shells"):
    """`/shells`: the session's background shells, oldest first."""

    shells: list[ShellEntry]


class ExportData(Tagged, tag="export"):
    """`/export`: where the session was written (contract section 19)."""

    path: str
    format: Literal["md", "jsonl"]
    bytes: int
    images: list[str]  # files written beside it (`<stem>.files/`)
    opened: bool  # the client opened it (window/showDocument)


class SubmissionInfo(msgspec.Struct, rename="camel", kw_only=True):
    index: int
    submission_id: str
    time: str  # in the configured timezone
    text: str  # its first line
    files: list[str]  # the paths it changed (from the undo records)


class RewindData(Tagged, tag="rewind"):
    """`/rewind` (contract section 19): the list, or what `/rewind N` restored."""

    submissions: list[SubmissionInfo]
    index: int | None = None  # the submission rewound to (before it)
    code: bool = False
    conversation: bool = False
    restored: list[str] = msgspec.field(default_factory=list)
    removed: list[str] = msgspec.field(default_factory=list)
    conflicts: list[str] = msgspec.field(default_factory=list)
    messages_dropped: int = 0  # model-context messages cut (still in the log and in /export)


class PluginInfo(msgspec.Struct, rename="camel", kw_only=True):
    name: str
    path: str  # its folder
    enabled: bool
    version: str = ""
    description: str = ""
    commands: list[str] = msgspec.field(default_factory=list)  # the slash commands and skills it adds now


class PluginList(Tagged, tag="plugins"):
    """`/plugin`: the installed plugins (Claude Code's plugin folders)."""

    plugins: list[PluginInfo]
    marketplaces: dict[str, str] = msgspec.field(default_factory=dict)  # added by name -> folder or URL


class EffortData(Tagged, tag="effort"):
    """`/effort`: the session's effort now and where it comes from."""

    effort: str | None  # None: the model's default
    source: Literal["session", "config", "default"]
    levels: list[str]


class StatusData(Tagged, tag="status"):
    """`/status`: what is in force for this session."""

    version: str
    model: str
    provider: str
    effort: str | None
    permissions: str
    trusted: bool
    sandbox: str
    session_id: str
    context_percent: int
    mcp: list[str] = msgspec.field(default_factory=list)  # the MCP servers and their states (none yet)
    disabled: list[CommandInfo] = msgspec.field(default_factory=list)  # the commands that cannot run now, and why


class SkillEntry(Wire):
    name: str
    source: str
    model_invocable: bool
    active: bool
    activated_by: str | None = None
    shadows: list[str] = msgspec.field(default_factory=list)


class SkillsData(Tagged, tag="skills"):
    skills: list[SkillEntry]


class ConfigEntry(Wire):
    key: str  # dotted, as in the files (`shell.timeoutSeconds`)
    value: Any
    layer: str  # the file or source it came from, or "default"


class ConfigData(Tagged, tag="config"):
    """`/config`: the effective configuration, each value with the layer it came from."""

    entries: list[ConfigEntry]


Data = (
    CommandCatalog
    | SessionList
    | ResumedSession
    | ModelData
    | PermissionsData
    | DiffData
    | UndoData
    | RevertData
    | HelpData
    | SessionData
    | InterruptData
    | CompactedData
    | UsageData
    | AgentsData
    | TaskData
    | TaskList
    | McpData
    | InputData
    | Completions
    | ContextData
    | CostData
    | ShellsData
    | ExportData
    | RewindData
    | PluginList
    | EffortData
    | StatusData
    | SkillsData
    | ConfigData
    | WorktreesData
)


class CommandResult(Wire):
    """The answer to every `workspace/executeCommand`."""

    session_id: str
    submission_id: str
    mode: Mode
    status: Status
    reply: str = ""
    command: str | None = None
    raw_output: str | None = None
    exit_code: int | None = None
    data: Data | None = None
    error: ErrorInfo | None = None


def error_result(session_id: str, submission_id: str, code: str, message: str) -> CommandResult:
    """A user mistake: `mode: error`, `status: failed`, a clear message."""
    return CommandResult(
        session_id=session_id,
        submission_id=submission_id,
        mode="error",
        status="failed",
        reply=message,
        error=ErrorInfo(code=code, message=message),
    )


def to_builtins(result: CommandResult) -> object:
    return msgspec.to_builtins(result)
