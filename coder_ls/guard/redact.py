"""Secret values kept out of everything that enters a session.

No child process gets the secret variables (`environ.child_env`), but the server's own
environment still holds them, and a process running as the same user can read it:
`tr '\\0' '\\n' < /proc/$PPID/environ` from `!cmd` (the shell's parent is the server),
the agent's `bash` outside a PID namespace, a `read` of that file. So output is redacted
where it enters the session, before it reaches the session log, the SQLite index, the
model's context or an event sent to the client:

- process output, in `RedactingShell.run` (`engine/redactshell.py`; every `!cmd`, the agent's `bash`,
  auto-verify, a command file's inline commands): the streamed chunks and the result;
- every tool's result, in `agent.tools.base.Tool.run` (a file read, a grep match).

Each value of a secret variable (`environ.secret_names`: the API keys and
`secrets.envNames`; 8 characters and longer) is replaced by `[redacted: NAME]`, and its
base64 forms (standard and URL-safe, at each of the three byte alignments, without the
characters that depend on the neighbouring bytes) by `[redacted: NAME (base64)]`. Other
encodings (hex, `rev`, a value printed in pieces) are not recognised: docs/security.md.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Iterable, Mapping

from coder_ls.environ import secret_names

MIN_SECRET_CHARS = 8


def _base64_forms(value: bytes) -> set[str]:
    """The runs of base64 characters that encode `value` whatever bytes surround it."""
    forms: set[str] = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + value + b"\0\0").decode("ascii")
        first = -(-offset * 8 // 6)  # the first character made only of the value's bits
        last = (offset + len(value)) * 8 // 6  # one past the last such character
        core = encoded[first:last]
        if len(core) >= MIN_SECRET_CHARS:
            forms.add(core)
            forms.add(core.replace("+", "-").replace("/", "_"))
    return forms


class Redactor:
    """Replaces the secret values (and their base64 forms) in text, in one pass."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        replacements: dict[str, str] = {}
        for name, value in secrets.items():
            if len(value) < MIN_SECRET_CHARS:
                continue
            for form in _base64_forms(value.encode("utf-8", "surrogateescape")):
                replacements.setdefault(form, f"[redacted: {name} (base64)]")
            replacements[value] = f"[redacted: {name}]"
        self._replacements = replacements
        found = sorted(replacements, key=len, reverse=True)  # the longest form wins
        self._pattern = re.compile("|".join(map(re.escape, found))) if found else None

    @classmethod
    def for_names(cls, extra: Iterable[str] = (), *, environ: Mapping[str, str] | None = None) -> Redactor:
        """The secret variables (`environ.secret_names(extra)`) set in `environ` (default: ours)."""
        env = os.environ if environ is None else environ
        return cls({name: env[name] for name in secret_names(extra) if name in env})

    def __bool__(self) -> bool:
        return self._pattern is not None

    def text(self, text: str) -> str:
        if self._pattern is None:
            return text
        return self._pattern.sub(lambda m: self._replacements[m.group(0)], text)

    def held_back(self, text: str) -> int:
        """How many characters at the end of `text` could be the start of a secret form."""
        best = 0
        if not text:
            return 0
        last = text[-1]
        for form in self._replacements:
            for k in range(min(len(form) - 1, len(text)), best, -1):
                if form[k - 1] == last and text.endswith(form[:k]):
                    best = k
                    break
        return best


class StreamRedactor:
    """Redacts text that arrives in chunks: a chunk's end that could begin a secret is held
    back until the next chunk shows whether it does (`flush` gives it up at the end)."""

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._held = ""

    def feed(self, chunk: str) -> str:
        text = self._redactor.text(self._held + chunk)
        keep = self._redactor.held_back(text)
        self._held = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep]

    def flush(self) -> str:
        held, self._held = self._held, ""
        return held
