"""Built-in prompt commands (contract section 11): kind `prompt`, source `builtin`, each
an agent turn. A command file of the same name replaces one (unlike the local commands)."""

from __future__ import annotations

from coder_ls.engine.commands.context import CommandContext
from coder_ls.engine.commands.registry import Command
from coder_ls.protocol.actions import CommandOutcome, RunAgent

INIT = """\
Study this workspace and write AGENTS.md at its root (or update it, if it exists), the \
instructions every future session here will start with.

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
        ),
    ]
