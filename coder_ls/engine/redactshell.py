"""The shells whose output never holds a secret value (`guard/redact.py` says how).

Apart from `redact.py` so that what only redacts text (the log handlers on the path of
`initialize`) does not import the shell machinery."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from coder_ls.engine.shell import PersistentShell, ShellResult
from coder_ls.guard.redact import Redactor, StreamRedactor

__all__ = ["RedactingShell"]


class RedactingShell(PersistentShell):
    """A shell whose output (streamed and final) never holds a secret value: the user's
    `!` shell and the agent's (`engine/agentshell.py`) are both of this kind."""

    async def run(
        self,
        command: str,
        *,
        on_output: Callable[[str], None],
        timeout: float,
        max_output_bytes: int,
        hide_env: Sequence[str] = (),
    ) -> ShellResult:
        redactor = Redactor.for_names(hide_env)
        if not redactor:
            return await super().run(
                command,
                on_output=on_output,
                timeout=timeout,
                max_output_bytes=max_output_bytes,
                hide_env=hide_env,
            )
        stream = StreamRedactor(redactor)

        def on_chunk(chunk: str) -> None:
            if text := stream.feed(chunk):
                on_output(text)

        try:
            result = await super().run(
                command,
                on_output=on_chunk,
                timeout=timeout,
                max_output_bytes=max_output_bytes,
                hide_env=hide_env,
            )
        finally:
            if tail := stream.flush():
                on_output(tail)
        return msgspec.structs.replace(result, output=redactor.text(result.output))
