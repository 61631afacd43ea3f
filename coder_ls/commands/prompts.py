"""Built-in prompt commands (contract section 11): kind `prompt`, source `builtin`, each
an agent turn. A command file of the same name replaces one (unlike the local commands)."""

from __future__ import annotations

from coder_ls.commands.availability import Need
from coder_ls.commands.context import CommandContext
from coder_ls.commands.registry import Command
from coder_ls.history import gitops
from coder_ls.protocol.actions import CommandOutcome, RunAgent, ToolGrant

INIT = """\
Study this workspace and write AGENTS.md at its root (or update it, if it exists), the \
instructions every future session here will start with.

If what to cover is unclear (which commands matter, what the team cares about), ask the \
user with the ask_user tool (a few multiple-choice questions), then go on with the answers.

First look around: the README and docs, the build and package files, the test setup, CI \
configuration, linters and formatters, and a few representative source files. If AGENTS.md, \
CLAUDE.md or CODER.md already exist, read them and keep what is still true.

Then write a concise AGENTS.md (well under 200 lines) for a coding agent that knows nothing \
of this project:
- what the project is, in two or three sentences, and how the code is laid out;
- the exact commands to install, build, run, lint, and test (one test too), as they work here;
- the conventions that are not obvious from the code: style, naming, error handling, \
where tests go, commit messages;
- pitfalls and things not to do.
Only facts you checked in the workspace; no generic advice. Edit the file with your tools, \
then say in a few lines what you wrote or changed."""


COMMIT = """\
Commit the current changes of this repository with git.

{state}

Steps: review the changes above; stage what belongs in the commit with `git add` (never \
secrets, build output or unrelated files; ask if unsure what to include); write a clear \
message in the repository's style (look at the recent commits): a short summary line, \
then why, if it is not obvious; run `git commit -m ...`; then show `git status`. \
Never amend, never skip hooks (--no-verify), never change git config, never push: those \
are refused.{extra}"""

# For the turn /commit starts: git's read and commit commands without a question; the
# ones /commit must never do are denied whatever the preset says.
_NEVER = ("--amend", "--no-verify", "-n", "--force", "-f")
COMMIT_GRANTS = (
    ToolGrant(tool="bash", command="git status"),
    ToolGrant(tool="bash", command="git diff"),
    ToolGrant(tool="bash", command="git log"),
    ToolGrant(tool="bash", command="git show"),
    ToolGrant(tool="bash", command="git add", forbidden=_NEVER),
    ToolGrant(tool="bash", command="git commit", forbidden=_NEVER),
    ToolGrant(tool="bash", command="git push", action="deny"),
    ToolGrant(tool="bash", command="git config", action="deny"),
    # around the grants, whatever the preset: config on the command line, another repo
    ToolGrant(tool="bash", command="git -c", action="deny"),
    ToolGrant(tool="bash", command="git -C", action="deny"),
    ToolGrant(tool="bash", command="git --git-dir", action="deny"),
    ToolGrant(tool="bash", command="git --work-tree", action="deny"),
    ToolGrant(tool="bash", command="git reset", action="deny"),
    ToolGrant(tool="bash", command="git rebase", action="deny"),
)


async def cmd_commit(ctx: CommandContext, args: str) -> CommandOutcome:
    state = await gitops.commit_state(ctx.root)
    if state is None:
        return CommandOutcome(error=f"/commit: not a git repository: {ctx.root}", error_code="not_a_git_repo")
    extra = f"\n\nAlso: {args.strip()}" if args.strip() else ""
    prompt = COMMIT.format(state=state, extra=extra)
    return CommandOutcome(actions=[RunAgent(prompt=prompt, plan=False, grants=COMMIT_GRANTS)])


REVIEW = """\
Review {target} as a careful senior engineer: correctness first (bugs, edge cases, error \
handling, concurrency, security), then clarity and tests. Read the code you need with \
your tools; do not change any file.

Report every finding with the reportFindings tool: the file, the line (and endLine for a \
range), a severity (error: a bug or a security hole; warning: likely wrong or fragile; \
information/hint: worth improving) and a message that says what is wrong and why. They \
appear in the editor as diagnostics, each with a "Coder: Fix" quick fix. Report nothing \
when you find nothing. Then summarise the review in a few lines.{state}"""


async def cmd_review(ctx: CommandContext, args: str) -> CommandOutcome:
    target = args.strip()
    if target:
        prompt = REVIEW.format(target=f"this: {target}", state="")
    else:
        result = await gitops.diff(ctx.root)
        if result.error:
            return CommandOutcome(
                error=f"/review without a target reviews the uncommitted changes: {result.error}",
                error_code="not_a_git_repo",
            )
        if not result.diff and not result.untracked:
            return CommandOutcome(reply="Nothing to review: no uncommitted changes. Name a target: /review src/app.py")
        diff = result.diff[: gitops.COMMIT_STATE_MAX]
        state = f"\n\nThe changes:\n{result.stat}\n\n{diff}"
        prompt = REVIEW.format(target="the uncommitted changes of this repository", state=state)
    return CommandOutcome(actions=[RunAgent(prompt=prompt, plan=False, review=True)])


async def cmd_init(ctx: CommandContext, args: str) -> CommandOutcome:
    extra = args.strip()
    prompt = f"{INIT}\n\nAlso: {extra}" if extra else INIT
    return CommandOutcome(actions=[RunAgent(prompt=prompt, plan=False)])


def prompt_commands() -> list[Command]:
    return [
        Command(
            "init",
            "Study the workspace and write or update AGENTS.md",
            "[what to focus on]",
            cmd_init,
            kind="prompt",
            progress_message="Writing AGENTS.md",
        ),
        Command(
            "review",
            "Review the changes (or a target); findings become diagnostics",
            "[target]",
            cmd_review,
            kind="prompt",
            progress_message="Reviewing",
        ),
        Command(
            "commit",
            "Commit the changes with a message in the repository's style",
            "[what to say]",
            cmd_commit,
            kind="prompt",
            progress_message="Committing",
            needs=(Need("git"),),
        ),
    ]
