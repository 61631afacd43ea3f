"""Word-level helpers of the shell parser: quoting undone the way bash does, wrapper
options skipped, the script a shell is given."""

from __future__ import annotations

import re
import shlex

from coder_ls.guard.shellparse.model import ANSI, Command


def unescape(text: str) -> str:
    if "\\" not in text:
        return text
    return re.sub(r"\\(.)", r"\1", text.replace("\\\n", ""), flags=re.S)


def dq_unescape(text: str) -> str:
    if "\\" not in text:
        return text
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def ansi_c(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        esc = m.group(1)
        if esc[0] in ANSI:
            return ANSI[esc[0]]
        if esc[0] == "x":
            return chr(int(esc[1:], 16)) if len(esc) > 1 else "x"
        if esc[0] in "uU":
            return chr(int(esc[1:], 16)) if len(esc) > 1 else esc
        if esc[0] in "01234567":
            return chr(int(esc, 8) & 0xFF)
        if esc[0] == "c":
            return chr(ord(esc[1:2] or "@") & 0x1F)
        return esc

    return re.sub(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)", one, text, flags=re.S)


def after_options(words: list[str | None], takes: frozenset[str]) -> list[str | None]:
    i = 1
    while i < len(words):
        w = words[i]
        if w is None or not w.startswith("-") or w == "-":
            break
        i += 1
        if w == "--":
            break
        if w in takes:
            i += 1
    return words[i:]


def option_value(words: list[str | None], names: tuple[str, ...]) -> str | None:
    for i, w in enumerate(words[1:], 1):
        if w is None or not w.startswith("-"):
            return None
        for name in names:
            if w == name and i + 1 < len(words):
                return words[i + 1] or ""
            if w.startswith(name) and len(w) > len(name):
                return w[len(name) :].lstrip("=")
    return None


def env_rest(words: list[str | None]) -> list[str | None]:
    i = 1
    while i < len(words) and words[i] is not None and str(words[i]).startswith("-"):
        i += 2 if words[i] in ("-S", "--split-string", "-u", "-C") else 1
    return words[i:]


def split_words(text: str) -> list[str | None]:
    try:
        return list(shlex.split(text))
    except ValueError:
        return [None]


def has_operand(cmd: Command) -> bool:
    """Whether a shell was given a script file (`bash x.sh`) rather than reading stdin."""
    args = cmd.args
    i = 0
    while i < len(args):
        a = args[i]
        if a is None:
            return True
        if a in ("-s", "-"):
            return False
        if a in ("-o", "+o", "-O", "+O"):
            i += 2
            continue
        if not a.startswith(("-", "+")):
            return True
        i += 1
    return False


def shell_script(program: str, cmd: Command) -> str | bool | None:
    """The text of `sh -c TEXT` (None if not a literal), False if there is no -c."""
    args = cmd.args
    for i, a in enumerate(args):
        if a is None:
            return False if i == 0 else None
        if (
            a == "-c"
            or a == "--command"
            or (program not in ("su", "runuser") and re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", a))
        ):
            return args[i + 1] if i + 1 < len(args) else None
        if a.startswith("--command="):
            return a.partition("=")[2]
        if not a.startswith(("-", "+")) and program not in ("su", "runuser"):
            return False
    return False
