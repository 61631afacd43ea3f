"""Reading a shell's `export -p` dump: the variables the user's `!` shell holds, for the
refused-command check (`PersistentShell.exports()`).

`export -p` prints one `declare -x NAME` or `declare -x NAME="value"` after another (with
attributes: `declare -rx`, `-ix`), the value in double quotes with `"`, `\\`, `$` and
backquotes escaped, or in `$'...'` for control characters, as bash prints it. Anything
else is not such a dump: None.
"""

from __future__ import annotations

import re

_ANY_ENTRY = re.compile(
    r"declare -[a-zA-Z]*x[a-zA-Z]* ([A-Za-z_][A-Za-z0-9_]*)"
    r"""(="(?:[^"\\$`]|\\[\\"$`\n])*"|=\$'(?:[^'\\]|\\.)*')?\n""",
    re.S,
)


def exported(text: str) -> dict[str, str] | None:
    """The variables an `export -p` dump holds (a name declared without a value is left
    out: it is unset), or None when `text` is not such a dump."""
    from coder_ls.guard.shellparse.words import ansi_c

    found: dict[str, str] = {}
    pos = 0
    while pos < len(text):
        m = _ANY_ENTRY.match(text, pos)
        if m is None:
            return None
        value = m.group(2)
        if value is not None and value.startswith('="'):
            found[m.group(1)] = re.sub(r'\\([\\"$`\n])', r"\1", value[2:-1])
        elif value is not None:
            found[m.group(1)] = ansi_c(value[3:-1])
        pos = m.end()
    return found
