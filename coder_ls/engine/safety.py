"""Refuse shell commands that would destroy the machine or data outside the workspace.

Commands are tokenized like bash does (`shlex` cannot tell `"|"` from `|`), split
into simple commands, looked at through wrappers (`sudo`, `env`, `xargs`) and into
nested scripts (`bash -c`, `eval`, `$(...)`, `echo ... | sh`), and judged by what they
would do: `echo "rm -rf /"` is fine. Unparseable quoting falls back to regexes.
"""

from __future__ import annotations

import os
import re
import shlex
import tempfile
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

_OPERATORS = sorted([*"&& || ;; ;& ;;& |& >> << <<- <<< &> &>> >& <& >| <> ; | & < > ( )".split(), "\n"], key=len)[::-1]
_SEPARATORS = {";", "&", "&&", "||", "|", "|&", "(", ")", "\n", ";;", ";&", ";;&"}
_KEYWORDS = set("! { } if then else elif fi while until do done time esac".split())
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
_SHELLS = {"bash", "sh", "dash", "zsh", "ksh", "ash", "mksh"}  # their `-c` scripts are checked too
_WRAPPERS: dict[str, set[str]] = {  # name -> its options that take a separate argument
    "sudo": {"-u", "-g", "-p", "-C", "-D", "-h", "-R", "-r", "-t", "-U", "-T"},
    "doas": {"-u", "-C"},
    "env": {"-u", "-C", "-S", "--unset", "--chdir", "--split-string"},
    "nice": {"-n", "--adjustment"},
    "ionice": {"-c", "-n", "-p", "-P", "-u"},
    "exec": {"-a"},
    "time": {"-f", "-o"},
    "stdbuf": {"-i", "-o", "-e"},
    "timeout": {"-s", "-k", "--signal", "--kill-after"},
    "xargs": {"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args"},
    **{name: set[str]() for name in "nohup command builtin chrt taskset setsid unbuffer busybox".split()},
}
_MKFS = re.compile(r"^(mkfs(\..+)?|mke2fs|mkswap|mkntfs|mkdosfs|mkexfatfs|wipefs|blkdiscard)$")
_PARTITIONERS = {"fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted"}
_POWER = {"shutdown", "reboot", "halt", "poweroff"}
_POWER_VERBS = set("poweroff reboot halt kexec suspend hibernate hybrid-sleep emergency rescue".split())
_SAFE_DEVICES = set("null zero full random urandom stdin stdout stderr tty ptmx console fd pts shm".split())
_SYSTEM_DIRS = ("/etc", "/boot", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/var/lib")
_FORK_BOMBS = (
    re.compile(r"(?P<n>[^\s(){};|&<>'\"]+)\s*\(\s*\)\s*\{[^}]*?(?P=n)\s*\|\s*&?\s*(?P=n)"),
    re.compile(r"function\s+(?P<n>[^\s(){};|&]+)\s*(\(\s*\))?\s*\{[^}]*?(?P=n)\s*\|\s*&?\s*(?P=n)"),
    re.compile(r"\bfork\s+while\s+fork\b|while\s*\(?\s*(1|true|True)\s*\)?\s*:?\s*\{?\s*(os\.)?fork\s*\("),
)
_QUOTED = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"", re.S)
_FALLBACKS = tuple(
    re.compile(pattern)
    for pattern in (
        r"--no-preserve-root",
        r"\brm\s+(-\S+\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\s+(-\S+\s+)*[\"']?(/\*?|~/?\*?|\$\{?HOME\}?/?\*?|\.\./?\*?"
        r"|/(bin|boot|etc|home|lib\w*|opt|root|usr|var)/?)[\"']?(\s|$|[;&|])",
        r"\b(mkfs(\.\w+)?|mke2fs|mkswap|wipefs|blkdiscard)\b",
        r"\bdd\b[^;&|]*\bof=/dev/(?!(null|zero|stdout|stderr)\b)",
        r">\s*/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-|mapper)",
        r"(^|[;&|(\s])(sudo\s+)?(shutdown|reboot|halt|poweroff)\b",
        r"\bkill\s+(-\S+\s+)?(--\s+)?-1\b",
        r"\bch(mod|own|grp)\s+(-\S+\s+)*-\S*R\S*\s+(\S+\s+)?[\"']?(/|~)[\"']?(\s|$)",
        r"\bfind\s+[\"']?(/|~)[\"']?\s.*-(delete|exec\s+rm)\b",
    )
)


@dataclass
class _Ctx:
    root: Path  # resolved
    home: Path
    cwd: Path | None  # None once a `cd` went somewhere unknown
    temps: tuple[Path, ...]


@dataclass
class _Cmd:
    words: list[str] = field(default_factory=list)
    redirects: list[tuple[str, str]] = field(default_factory=list)
    piped_from: _Cmd | None = None


def check_command(command: str, root: Path, *, cwd: Path | None = None, home: Path | None = None) -> str | None:
    """Why `command` is refused, or None if it may run. `cwd` defaults to `root`."""
    real_root = Path(root).resolve()
    temps = {Path(p).resolve() for p in ("/tmp", "/var/tmp", tempfile.gettempdir())}
    ctx = _Ctx(real_root, Path(home or Path.home()).resolve(), Path(cwd or root).absolute(), tuple(temps))
    reason = _check(command, ctx, 0)
    return f"Refused: {reason}. Nothing was run." if reason else None


def _check(text: str, ctx: _Ctx, depth: int) -> str | None:
    if depth > 6:
        return "the command nests shells too deeply to be checked"
    unquoted = _QUOTED.sub("''", text)
    if any(bomb.search(unquoted) for bomb in _FORK_BOMBS[:2]) or _FORK_BOMBS[2].search(text):
        return "this is a fork bomb, it would exhaust the machine's processes"
    try:
        tokens, subs = _tokenize(text)
    except ValueError:
        if any(pattern.search(text) for pattern in _FALLBACKS):
            return "the command looks destructive (its quoting could not be parsed, so it was judged by its text)"
        return None
    nested = (_check(sub, ctx, depth + 1) for sub in subs)
    simple = (_check_simple(cmd, ctx, depth) for cmd in _split(tokens))  # lazy: `cd` moves ctx.cwd
    return next((reason for reason in chain(nested, simple) if reason), None)


def _tokenize(text: str) -> tuple[list[tuple[bool, str]], list[str]]:
    """(is_operator, value) tokens with quotes removed, plus nested command texts."""
    tokens: list[tuple[bool, str]] = []
    subs: list[str] = []
    heredocs: list[tuple[int, bool]] = []  # (index of the delimiter token, strip tabs)
    word: list[str] = []
    in_word = False
    i, n = 0, len(text)

    def flush() -> None:
        nonlocal in_word
        if in_word:
            tokens.append((False, "".join(word)))
        word.clear()
        in_word = False

    while i < n:
        c = text[i]
        if c in " \t\r":
            flush()
            i += 1
        elif c == "#" and not in_word:
            while i < n and text[i] != "\n":
                i += 1
        elif c == "\\":  # an escaped newline joins lines
            in_word = in_word or text[i + 1 : i + 2] != "\n"
            word.append(text[i + 1 : i + 2].strip("\n"))
            i += 2
        elif c == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise ValueError("unterminated '")
            word.append(text[i + 1 : end])
            in_word, i = True, end + 1
        elif c == '"':
            i = _double_quoted(text, i + 1, word, subs)
            in_word = True
        elif c in "$`" or (c in "<>" and text.startswith("(", i + 1)):
            i = _expansion(text, i, word, subs)
            in_word = True
        elif c in ";|&<>()\n":
            flush()
            op = next(o for o in _OPERATORS if text.startswith(o, i))
            i += len(op)
            if op in ("<<", "<<-"):
                heredocs.append((len(tokens) + 1, op == "<<-"))
            if op == "\n" and heredocs:
                i = _read_heredocs(text, i, tokens, heredocs)
            tokens.append((True, op))
        else:
            word.append(c)
            in_word, i = True, i + 1
    flush()
    return tokens, subs


def _double_quoted(text: str, i: int, word: list[str], subs: list[str]) -> int:
    while i < len(text):
        c = text[i]
        if c == '"':
            return i + 1
        if c == "\\" and text[i + 1 : i + 2] in ('"', "\\", "$", "`", "\n"):
            word.append(text[i + 1])
            i += 2
        elif c in "$`":
            i = _expansion(text, i, word, subs)
        else:
            word.append(c)
            i += 1
    raise ValueError('unterminated "')


def _expansion(text: str, i: int, word: list[str], subs: list[str]) -> int:
    """`$(...)`, backquotes, `<(...)`, `${...}`, `$((...))`, `$'...'` or a plain `$`."""
    if text.startswith("$(", i) or text[i] in "<>":
        end = _matching(text, i + 2, "(", ")")
        if not text.startswith("$((", i):
            subs.append(text[i + 2 : end])
    elif text[i] == "`":
        end = _closing(text, i + 1, "`")
        subs.append(text[i + 1 : end].replace("\\`", "`"))
    elif text.startswith("${", i):
        end = _matching(text, i + 2, "{", "}")
    elif text.startswith("$'", i):
        end = _closing(text, i + 2, "'")
    else:
        end = i
    word.append(text[i : end + 1])
    return end + 1


def _closing(text: str, i: int, quote: str) -> int:
    """Index of the next unescaped `quote` from i."""
    while i < len(text) and text[i] != quote:
        i += 2 if text[i] == "\\" else 1
    if i >= len(text):
        raise ValueError(f"unterminated {quote}")
    return i


def _matching(text: str, i: int, opening: str, closing: str) -> int:
    """Index of the `closing` that balances an already opened `opening` (quote-aware)."""
    depth = 1
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            i = text.find("'", i + 1)
            if i < 0:
                break
        elif c == '"':
            i = _closing(text, i + 1, '"')
        elif c == opening:
            depth += 1
        elif c == closing:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ValueError(f"unbalanced {opening}")


def _read_heredocs(text: str, i: int, tokens: list[tuple[bool, str]], pending: list[tuple[int, bool]]) -> int:
    """Consume the bodies of the here-documents opened on the line just ended."""
    for index, strip in pending:
        body: list[str] = []
        while index < len(tokens) and not tokens[index][0] and i < len(text):
            line = text[i:].partition("\n")[0]
            i += len(line) + 1
            if (line.lstrip("\t") if strip else line) == tokens[index][1]:
                break
            body.append(line)
        tokens[index] = (False, "\n".join(body))
    pending.clear()
    return i


def _split(tokens: list[tuple[bool, str]]) -> list[_Cmd]:
    cmds: list[_Cmd] = []
    cmd = _Cmd()
    i, tokens = 0, [*tokens, (True, ";")]
    while i < len(tokens):
        is_op, value = tokens[i]
        if is_op and value in _SEPARATORS:
            if cmd.words or cmd.redirects:
                cmds.append(cmd)
            cmd = _Cmd(piped_from=cmds[-1] if value in ("|", "|&") and cmds else None)
        elif is_op:  # a redirection: the next word is its target
            has_target = i + 1 < len(tokens) and not tokens[i + 1][0]
            cmd.redirects.append((value, tokens[i + 1][1] if has_target else ""))
            i += 1 if has_target else 0
        else:
            cmd.words.append(value)
        i += 1
    return cmds


def _unwrap(words: list[str]) -> list[str]:
    """Drop assignments, keywords and wrappers such as `sudo -u x` or `env A=1`."""
    while words:
        name = os.path.basename(words[0])
        if _ASSIGNMENT.match(words[0]) or words[0] in _KEYWORDS:
            words = words[1:]
        elif name in _WRAPPERS:
            takes_arg = _WRAPPERS[name]
            i = 1
            while i < len(words) and words[i].startswith("-") and words[i] != "-":
                if words[i] == "--":
                    i += 1
                    break
                i += 2 if words[i] in takes_arg else 1
            if name == "env":
                while i < len(words) and _ASSIGNMENT.match(words[i]):
                    i += 1
            elif name in ("timeout", "chrt", "taskset") and i < len(words):
                i += 1  # the duration, priority or mask
            words = words[i:]
        else:
            return words
    return words


def _check_simple(cmd: _Cmd, ctx: _Ctx, depth: int) -> str | None:
    for op, target in cmd.redirects:
        if ">" in op and target and (reason := _write_target(target, ctx, truncate=op in (">", ">|", "&>"))):
            return reason
    words = _unwrap(cmd.words)
    if not words:
        return None
    name, args = os.path.basename(words[0]), words[1:]
    shown = shlex.join(words)
    if name in _SHELLS or name in ("eval", "su", "watch"):
        if script := _nested_script(name, args, cmd):
            return _check(script, ctx, depth + 1)
        return None
    if name == "cd" or name == "pushd":
        _change_dir(args, ctx)
        return None
    if _MKFS.match(name):
        return f"`{shown}` formats or wipes a disk"
    if name in _PARTITIONERS and not {"-l", "--list", "print", "-p"} & set(args):
        return f"`{shown}` rewrites a disk's partition table"
    if name in _POWER or (name in ("init", "telinit") and args[:1] in (["0"], ["6"])):
        return f"`{shown}` would shut down or reboot the machine"
    if name in ("systemctl", "loginctl") and _POWER_VERBS & set(args):
        return f"`{shown}` would shut down or suspend the machine"
    if name in ("kill", "pkill", "killall5") and (name == "killall5" or _kills_everything(args)):
        return f"`{shown}` would kill every process (or init)"
    if name == "crontab" and "-r" in args:
        return f"`{shown}` deletes your crontab"
    if name in ("rm", "unlink", "shred", "srm"):
        return _check_delete(shown, args, ctx)
    if name == "find":
        return _check_find(shown, args, ctx, depth)
    if name in ("chmod", "chown", "chgrp"):
        return _check_permissions(shown, name, args, ctx)
    if name == "mv":
        return _check_move(shown, args, ctx)
    if name in ("dd", "tee", "cp", "install"):
        targets = [a for a in args if not a.startswith("-")]
        targets = {"dd": [a[3:] for a in args if a.startswith("of=")], "tee": targets}.get(name, targets[-1:])
        for target in targets:
            if reason := _write_target(target, ctx, truncate=name != "tee" or "-a" not in args):
                return f"`{shown}`: {reason}"
    return None


def _nested_script(name: str, args: list[str], cmd: _Cmd) -> str | None:
    """The script text a shell, eval, su or watch would run, if it is visible."""
    if name in ("eval", "watch"):
        return " ".join(a for a in args if not a.startswith("-")) if name == "watch" else " ".join(args)
    for i, arg in enumerate(args):
        if arg == "-c" or (name != "su" and re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", arg)):
            return args[i + 1] if i + 1 < len(args) else None
        if arg == "--command" or arg.startswith("--command="):
            return arg.partition("=")[2] or (args[i + 1] if i + 1 < len(args) else None)
    if name == "su" or any(not a.startswith("-") for a in args):
        return None  # su without -c, or a script file we cannot see
    for op, target in cmd.redirects:
        if op in ("<<", "<<-", "<<<"):
            return target
    source = cmd.piped_from
    if source and source.words and os.path.basename(source.words[0]) in ("echo", "printf"):
        return " ".join(a for a in source.words[1:] if not re.fullmatch(r"-[neE]+", a))
    return None


def _kills_everything(args: list[str]) -> bool:
    rest = list(args)
    if rest and rest[0] in ("-s", "-n", "--signal"):
        rest = rest[2:]
    elif rest and rest[0].startswith("-") and rest[0] not in ("--", "-1"):
        rest = rest[1:]
    elif rest[:1] == ["-1"] and len(rest) > 1:
        rest = rest[1:]  # `kill -1 PID` sends SIGHUP to PID
    return any(a in ("-1", "1") for a in rest if a != "--")


def _change_dir(args: list[str], ctx: _Ctx) -> None:
    targets = [a for a in args if not a.startswith("-") or a == "-"]
    resolved = _target(targets[0], ctx) if targets else (ctx.home, False)
    ctx.cwd = resolved[0] if resolved else None


def _target(word: str, ctx: _Ctx, *, resolve: bool = True) -> tuple[Path, bool] | None:
    """The real path a word names (None if unknowable) and whether it is a glob's directory."""
    text = re.sub(r"\$(\{HOME\}|HOME\b)", str(ctx.home), word)
    if ctx.cwd is not None:
        text = re.sub(r"\$(\{PWD\}|PWD\b)|\$\(pwd\)|`pwd`", str(ctx.cwd), text)
    if "$" in text or "`" in text or text == "-":
        return None  # a variable or output we cannot know
    if text == "~" or text.startswith("~/"):
        text = str(ctx.home) + text[1:]
    elif text.startswith("~") and (text := os.path.expanduser(text)).startswith("~"):
        return None
    parts = text.split("/")
    glob_at = next((k for k, part in enumerate(parts) if re.search(r"[*?\[]", part)), None)
    if glob_at is not None:
        text = "/".join(parts[:glob_at]) or ("/" if text.startswith("/") else ".")
    if not text.startswith("/") and ctx.cwd is None:
        return None
    path = Path(ctx.cwd or "/", text)
    if not resolve:
        return Path(os.path.normpath(path)), glob_at is not None
    if glob_at is not None or text.endswith("/") or path.name in ("", ".", "..") or path == path.parent:
        return Path(os.path.realpath(path)), glob_at is not None  # the directory itself
    return Path(os.path.realpath(path.parent)) / path.name, False  # a link is not followed


def _describe(real: Path, ctx: _Ctx, *, root_ok: bool = False) -> str | None:
    """Why destroying `real` is off limits, or None if it is in the workspace or a temp dir."""
    if real == Path("/"):
        return "/ (the whole filesystem)"
    if real == ctx.home:
        return f"{real} (your home directory)"
    if real == ctx.root:
        return None if root_ok else f"{real} (the workspace itself)"
    if ctx.root in real.parents:
        return None
    if real in ctx.root.parents:
        return f"{real}, a parent of the workspace"
    if ctx.home in real.parents:
        return f"{real}, which is outside the workspace, in your home directory"
    if any(temp in real.parents for temp in ctx.temps):
        return None
    return f"{real}, which is outside the workspace ({ctx.root})"


def _check_delete(shown: str, args: list[str], ctx: _Ctx) -> str | None:
    if "--no-preserve-root" in args:
        return f"`{shown}` uses --no-preserve-root, which lets rm delete /"
    split = args.index("--") if "--" in args else len(args)
    for target in [a for a in args[:split] if not a.startswith("-") or a == "-"] + args[split + 1 :]:
        resolved = _target(target, ctx)
        if resolved and (where := _describe(resolved[0], ctx, root_ok=resolved[1])):
            return f"`{shown}` would delete {where}"
    return None


def _check_find(shown: str, args: list[str], ctx: _Ctx, depth: int) -> str | None:
    starts = []
    for arg in args:
        if arg.startswith("-") or arg in ("(", "!", ")"):
            break
        starts.append(arg)
    deletes = "-delete" in args
    for i, arg in enumerate(args):
        if arg in ("-exec", "-execdir", "-ok", "-okdir") and i + 1 < len(args):
            inner = args[i + 1 :]
            inner = inner[: next((k for k, a in enumerate(inner) if a in (";", "+")), len(inner))]
            program = _unwrap(inner)[:1]
            deletes = deletes or any(
                os.path.basename(p) in ("rm", "shred", "unlink", "mv", "sh", "bash") for p in program
            )
            if reason := _check_simple(_Cmd(words=inner), ctx, depth):
                return reason
    if not deletes:
        return None
    for real in [r[0] for r in (_target(start, ctx) for start in starts or ["."]) if r]:
        if where := _describe(real, ctx, root_ok=True):
            return f"`{shown}` would delete files under {where}"
    return None


def _check_permissions(shown: str, name: str, args: list[str], ctx: _Ctx) -> str | None:
    recursive, positional = False, []
    for arg in args:
        if arg in ("--recursive",) or re.fullmatch(r"-[RfvcHLP]*R[RfvcHLP]*", arg):
            recursive = True
        elif arg.startswith("--") or (arg.startswith("-") and re.fullmatch(r"-[fvcHLP]+", arg)):
            continue
        else:
            positional.append(arg)
    if not any(a.startswith("--reference") for a in args):
        positional = positional[1:]  # the mode or owner
    for real in [r[0] for r in (_target(target, ctx) for target in positional) if r]:
        if where := _describe(real, ctx, root_ok=True) if recursive else _system_path(real):
            return f"`{shown}` would change the permissions or owner of {where}"
    return None


def _check_move(shown: str, args: list[str], ctx: _Ctx) -> str | None:
    paths = [a for a in args if not a.startswith("-")]
    for source in paths[:-1]:
        real = (_target(source, ctx) or (None, False))[0]
        if real and (real in (Path("/"), ctx.home) or real in ctx.root.parents or _system_path(real)):
            return f"`{shown}` would move {real} away, breaking the system or the workspace"
    if paths and paths[-1].startswith("/dev/"):
        return f"`{shown}` would replace the device {paths[-1]}"
    return None


def _system_path(real: Path) -> str | None:
    text = str(real)
    if real.parent == Path("/") or any(text == d or text.startswith(d + "/") for d in _SYSTEM_DIRS):
        return f"{real}, a system path"
    return None


def _write_target(target: str, ctx: _Ctx, *, truncate: bool) -> str | None:
    """Why writing to `target` is destructive (a disk device, the kernel, system files)."""
    resolved = None if target.isdigit() else _target(target, ctx, resolve=False)
    if not resolved:
        return None
    text = str(resolved[0])
    if text.startswith("/dev/") and text[5:].partition("/")[0] not in _SAFE_DEVICES:
        return f"writing to the device {text} would destroy its data"
    if any(text == d or text.startswith(d + "/") for d in ("/proc", "/sys")):
        return f"writing to {text} changes the running kernel"
    if truncate and _system_path(Path(text)) and os.path.exists(text):
        return f"overwriting {text} would break the system"
    return None
