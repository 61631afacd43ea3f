"""The persistent shell's state as a sandboxed command leaves it, checked before the
user's own (unsandboxed) shell takes it over.

After each command the shell saves `export -p` and `pwd`; the next command sources that
file. A sandboxed command writes its state into a folder of its own, because anything it
can write, the user's next `!cmd` would run outside the sandbox. So that file is taken
only as `export -p` output (one `declare -x NAME` or `declare -x NAME="value"` after
another, the value in double quotes with `"`, `\\`, `$` and backquotes escaped, or in
`$'...'` for control characters, as bash prints it), and the variables that make every
later program run code of the command's choosing are dropped (`LD_PRELOAD`, `BASH_ENV`,
`PROMPT_COMMAND`, `GIT_SSH_COMMAND`, `NODE_OPTIONS`, ...). A file that is anything else
is not taken: the previous state stays.
"""

from __future__ import annotations

import re

_ENTRY = re.compile(
    r"declare -x ([A-Za-z_][A-Za-z0-9_]*)"
    r"""(="(?:[^"\\$`]|\\[\\"$`\n])*"|=\$'(?:[^'\\]|\\.)*')?\n""",
    re.S,
)
# Variables through which a value alone runs code in later, unsandboxed programs.
_DANGEROUS = re.compile(
    r"^(LD_\w*|DYLD_\w*|BASH_ENV|ENV|PROMPT_COMMAND|PS[0-4]|SHELLOPTS|BASHOPTS|IFS|BASH_XTRACEFD|"
    r"GIT_\w*(COMMAND|PAGER|EDITOR|EXEC_PATH|EXTERNAL_DIFF|ASKPASS|PROXY|SSH|CONFIG\w*|TEMPLATE_DIR|DIR|WORK_TREE)|"
    r"SSH_ASKPASS|PAGER|MANPAGER|EDITOR|VISUAL|BROWSER|PYTHONSTARTUP|PYTHONINSPECT|PYTHONHOME|PERL5OPT|PERL5LIB|"
    r"PERLLIB|RUBYOPT|RUBYLIB|NODE_OPTIONS|NODE_PATH|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|"
    r"LESSOPEN|LESSCLOSE|TERMINFO|HISTFILE|INPUTRC|MAIL\w*|LOCPATH|GCONV_PATH|NLSPATH|HOSTALIASES|RESOLV_HOST_CONF)$"
)


_ANY_ENTRY = re.compile(_ENTRY.pattern.replace("declare -x ", "declare -[a-zA-Z]*x[a-zA-Z]* "), re.S)


def exported(text: str) -> dict[str, str] | None:
    """The variables an `export -p` dump holds (a name declared without a value is left
    out: it is unset), or None when `text` is not such a dump."""
    from coder_ls.engine.shellparse.words import ansi_c

    found: dict[str, str] = {}
    pos = 0
    while pos < len(text):
        m = _ANY_ENTRY.match(text, pos)  # `declare -rx`, `-ix` too: the user's own shell
        if m is None:
            return None
        value = m.group(2)
        if value is not None and value.startswith('="'):
            found[m.group(1)] = re.sub(r'\\([\\"$`\n])', r"\1", value[2:-1])
        elif value is not None:
            found[m.group(1)] = ansi_c(value[3:-1])
        pos = m.end()
    return found


def clean_state(text: str) -> tuple[str, list[str]] | None:
    """(the state to keep, the names dropped), or None when `text` is not `export -p` output."""
    kept: list[str] = []
    dropped: list[str] = []
    pos = 0
    while pos < len(text):
        m = _ENTRY.match(text, pos)
        if m is None:
            return None
        if _DANGEROUS.match(m.group(1)):
            dropped.append(m.group(1))
        else:
            kept.append(m.group(0))
        pos = m.end()
    return "".join(kept), dropped
