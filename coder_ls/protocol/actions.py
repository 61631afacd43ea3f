"""Input actions: what a slash command asks the executor to do.

A command never touches the session itself; it returns a `CommandOutcome` with
text, typed data and actions, and the executor carries the actions out.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from coder_ls.protocol.args import SelectionContext
from coder_ls.protocol.config import HookEventName, HookGroup
from coder_ls.protocol.messages import ImageBlock
from coder_ls.protocol.results import Data, PermissionEntry
from coder_ls.protocol.tasks import TaskRequest


class ToolGrant(msgspec.Struct, frozen=True):
    """What a command file's `allowed-tools` (or a built-in prompt command) grants for the
    one turn it starts. `action` allow: `tool` runs without a question (bash: commands
    starting with `command`, matched on the parsed line; file tools: paths matching the
    `path` glob, or any), unless one of `forbidden` is among a covered command's words,
    which denies it. `action` deny: like a deny rule, for that turn."""

    tool: str
    command: str | None = None
    path: str | None = None
    forbidden: tuple[str, ...] = ()
    action: Literal["allow", "deny"] = "allow"
    exact: bool = False  # `Bash(npm test)`: that command only; `Bash(npm test:*)`: a prefix
    domain: str | None = None  # `WebFetch(domain:docs.python.org)`: that host and its subdomains


class Paste(msgspec.Struct, frozen=True):
    """A long pasted text: `[Pasted text #number, L lines]` in the prompt, whole to the model."""

    number: int
    text: str


class References(msgspec.Struct, frozen=True):
    """The `@path` references a turn may attach (contract section 19), and who wrote them:
    `typed`, a prompt the user typed (LSP or ACP, origin `typed`: a rule that asks is their
    yes); `prompt`, a prompt from another origin (a link, the client's automation, a remote
    client); `command`, the body of a command file or skill the user invoked (`text`).
    Every other text a turn starts from (a code action, an MCP prompt, an agent definition,
    a skill the model loads) has none: `@` there is text. `agent/references.py` is the one
    resolver for all three."""

    source: Literal["typed", "prompt", "command"]
    text: str | None = None  # where the references are written; None: the prompt itself
    folders: tuple[str, ...] = ()  # the command's own skill or plugin folder, tried after the workspace


class RunAgent(msgspec.Struct, frozen=True):
    prompt: str
    context: SelectionContext | None = None
    plan: bool = True  # a complex request starts with a todo list; code actions never do
    model: str | None = None  # this turn only (a command's `model:`); the session's model stays
    grants: tuple[ToolGrant, ...] = ()  # this turn only (a command's `allowed-tools`)
    review: bool = False  # `/review`: the turn reports findings (`reportFindings`) as diagnostics
    fork: str | None = None  # `context: fork`: run as this subagent, the session keeps only a note
    task: TaskRequest | None = None  # `/task`: plan and run the goal with subagents (section 14)
    command: str = ""  # the command that started it (`/name`), for that note
    # a skill's own hooks (its `hooks:` front matter), active during this turn only; `hooks_source` its file
    hooks: dict[HookEventName, list[HookGroup]] = msgspec.field(default_factory=dict)
    hooks_source: str = ""
    images: tuple[ImageBlock, ...] = ()  # stored images sent with the prompt (section 19)
    references: References | None = None  # the `@path` references that attach files (section 19)
    pastes: tuple[Paste, ...] = ()  # the long pastes the prompt names (section 19)
    effort: str | None = None  # this turn only (a command's `effort:`); else the session's
    # what `userMessage` and the title say when `prompt` is an instruction the user did not
    # type (a plan's approval: the chat shows "Approved the plan (auto-edit)", not the plan)
    shown: str = ""


class RunPromptCommand(msgspec.Struct, frozen=True):
    """A command or skill from a file, its arguments expanded: its `` !`cmd` `` run in the
    session's shell when it starts, then an agent turn (with `model`, if given)."""

    prompt: str  # with a slot where each inline command's output goes
    commands: tuple[str, ...] = ()  # the body's inline commands, arguments put in
    model: str | None = None
    grants: tuple[ToolGrant, ...] = ()
    fork: str | None = None  # `context: fork`: the subagent to run it as (`agent:`, default general)
    name: str = ""
    # an untrusted workspace's file (its path): `commands` run only after the user approves them
    confirm_commands: str | None = None
    hooks: dict[HookEventName, list[HookGroup]] = msgspec.field(default_factory=dict)  # see RunAgent.hooks
    hooks_source: str = ""
    effort: str | None = None  # its turn's effort (`effort:` in the front matter)
    references: References | None = None  # the body's own `@path` references (section 19)


class RunShell(msgspec.Struct, frozen=True):
    command: str


class ChangeModel(msgspec.Struct, frozen=True):
    model: str
    provider: str | None = None


class ChangePermissions(msgspec.Struct, frozen=True):
    preset: str


class TrustWorkspace(msgspec.Struct, frozen=True):
    """`/trust`: apply the widening settings of the workspace's `.coder/config.json`."""


class ResetSession(msgspec.Struct, frozen=True):
    """`/new` (kind new) or `/clear` (kind clear)."""

    kind: Literal["new", "clear"]


class ResumeSession(msgspec.Struct, frozen=True):
    session_id: str


class UndoLast(msgspec.Struct, frozen=True):
    all: bool = False


class Compact(msgspec.Struct, frozen=True):
    instructions: str = ""
    keep_last: int = 0  # exchanges kept verbatim after the summary
    clear: bool = False  # `--clear`: only the first level (old tool results cleared, no model call)


class SideQuestion(msgspec.Struct, frozen=True):
    """`/btw <question>`: answered from the context as it is, recorded nowhere."""

    question: str


class ShowContext(msgspec.Struct, frozen=True):
    """`/context`: what fills the model context, counted."""


class ShowCost(msgspec.Struct, frozen=True):
    """`/cost` (`/usage`): the session's tokens and their estimated price."""


class ListShells(msgspec.Struct, frozen=True):
    """`/shells`: the agent's background shells in this session."""


class ExportSession(msgspec.Struct, frozen=True):
    """`/export [path] [--format md|jsonl] [--force]`."""

    path: str = ""  # "" = .coder/exports/<sessionId>.<ext>
    format: str = "md"  # md | jsonl
    force: bool = False  # replace an existing file


class DiffTurn(msgspec.Struct, frozen=True):
    """`/diff turn [N]`: what submission N (None: the last) changed."""

    index: int | None = None


class Rewind(msgspec.Struct, frozen=True):
    """`/rewind [N] [--code|--conversation|--both]`; no index: the list."""

    index: int | None = None
    code: bool = True
    conversation: bool = True


class WriteConfig(msgspec.Struct, frozen=True):
    """`/config key value`: one setting into the user's or the workspace's file."""

    key: str  # dotted, camelCase (`shell.timeoutSeconds`)
    value: str  # JSON, already checked
    scope: Literal["user", "workspace"] = "workspace"


class ChangeEffort(msgspec.Struct, frozen=True):
    """`/effort <level>`: the session's default effort (None: the configuration's)."""

    level: str | None


class RevokePermission(msgspec.Struct, frozen=True):
    """`/permissions revoke N`: take back one user or workspace rule, or one session grant
    (never a managed rule nor the editor's: the command refuses those)."""

    entry: PermissionEntry


class EnterPlan(msgspec.Struct, frozen=True):
    """`/plan`: the session works in plan mode (contract section 22) until a plan is
    approved or rejected."""


class LeavePlan(msgspec.Struct, frozen=True):
    """`/plan off`: the session leaves plan mode without a plan (the one waiting, if any,
    can no longer be answered)."""


Action = (
    RunAgent
    | RunPromptCommand
    | RunShell
    | ChangeModel
    | ChangePermissions
    | TrustWorkspace
    | ResetSession
    | ResumeSession
    | UndoLast
    | Compact
    | SideQuestion
    | ShowContext
    | ShowCost
    | ListShells
    | ExportSession
    | DiffTurn
    | Rewind
    | ChangeEffort
    | WriteConfig
    | RevokePermission
    | EnterPlan
    | LeavePlan
)


class CommandOutcome(msgspec.Struct):
    """What a slash command produced before its actions run."""

    reply: str = ""
    data: Data | None = None
    actions: list[Action] = msgspec.field(default_factory=list)
    error: str | None = None  # a user mistake: becomes mode "error"
    error_code: str = "invalid_argument"
