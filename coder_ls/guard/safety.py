"""Refuse shell commands that would destroy the machine or data outside the workspace.

The line is parsed once by `guard.shellparse` (tree-sitter-bash): every simple command
that may run (behind wrappers, in `sh -c`, `eval`, here-docs, pipes into a shell,
function bodies, substitutions) is judged by what it would do, so `echo "rm -rf /"` and
`grep 'os.fork(' .` are fine while `command rm -rf ~`, `x=/; rm -rf $x` and
`echo cm0gLXJmIC8= | base64 -d | sh` are not. A word we cannot know (a variable from
the environment, `$(…)`) is an unknown target: harmless for `ls`, refused as the target
of a recursive delete. Relative paths resolve from the shell's cwd, and a `cd` moves it.
The time is linear in the length of the line; `check_command_async` runs long lines in a
worker thread so the event loop never waits on them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import shlex
import tempfile
from collections.abc import Mapping
from pathlib import Path

from coder_ls.guard.safetyhost import host_refusal
from coder_ls.guard.safetypaths import (
    SAFE_DEVICES,
    CheckContext,
    change_dir,
    check_git,
    edited_files,
    in_place,
    is_device,
    judge_write,
    note_link,
    off_limits,
    overwrite_refusal,
    real_path,
    resolve_word,
    system_path,
    work_tree_top,
    write_refusal,
)
from coder_ls.guard.shellparse import DECODERS, INTERPRETERS, SHELLS, Command, ParsedLine, Redirect, parse
from coder_ls.guard.shellparse.indirect import code_strings, is_interpreter, is_shell
from coder_ls.guard.writetargets import deletes_in, writes

_MKFS = re.compile(r"^(mkfs(\..+)?|mke2fs|mkswap|mkntfs|mkdosfs|mkexfatfs|wipefs|blkdiscard)$")
_PARTITIONERS = {"fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted"}
_POWER = {"shutdown", "reboot", "halt", "poweroff"}
_POWER_VERBS = set("poweroff reboot halt kexec suspend hibernate hybrid-sleep emergency rescue".split())
_CODE_FORK = re.compile(
    r"fork\s+while\s+fork|while\s*\(?\s*(1|true|True)\s*\)?\s*:?\s*\{?\s*(os\.|process\.)?fork\s*\("
)
_CODE_RMTREE = re.compile(r"rmtree\(\s*(['\"](/|~)[^'\"]*['\"]|os\.path\.expanduser|Path\.home|pathlib\.Path\(['\"]/)")
_LISTERS = {"find", "fd", "git", "ls", "grep", "rg"}
# Under the home directory: files that run code at the next login, shell, git call or
# boot, and the keys that let someone in. Writing them is how code persists.
_SYMBOLIC = re.compile(r"--symbolic|-[a-zA-Z]*s[a-zA-Z]*")
_SEPARATOR = re.compile(r"&&|\|\||[;\n|&]|\[\[|\]\]")
ASYNC_THRESHOLD = 16 * 1024  # longer lines are checked in a worker thread


def check_command(
    command: str,
    root: Path,
    *,
    cwd: Path | None = None,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> str | None:
    """Why `command` is refused, or None if it may run. `cwd` defaults to `root`; `env` is
    the environment the persistent shell holds (its exports), when the caller knows it.

    Never raises on a path: one the check cannot resolve (`/proc/1/root/…`, a loop, no
    permission, a name too long) is judged as written."""
    real = _RealPaths()  # the same folder named twice (/tmp and $TMPDIR, ~ and $HOME) resolved once
    real_root = real(str(root))
    temps = {real(p) for p in ("/tmp", "/var/tmp", tempfile.gettempdir())}
    if env is not None and env.get("TMPDIR", "").startswith("/"):
        temps.add(real(env["TMPDIR"]))
    real_home = real(str(home or Path.home()))
    start = Path(cwd or root).absolute()
    ctx = CheckContext(real_root, real_home, start, tuple(temps), env=env)
    if env is not None:
        shell_home = env.get("HOME")
        ctx.tilde = real(shell_home) if shell_home and shell_home.startswith("/") else None
        ctx.cdpath = tuple(env.get("CDPATH", "").split(":")) if env.get("CDPATH") else ()
    try:
        top = work_tree_top(start)
        line = parse(command, home=str(ctx.tilde or real_home), cwd=str(start), env=env, root=top)
        reason = _check_line(line, ctx)
        if reason is None and not line.parsed:
            reason = _check_pieces(command, ctx)
    except (OSError, ValueError) as e:  # a path nothing above could judge: refuse, never raise
        reason = f"a path in it cannot be checked ({type(e).__name__}: {str(e)[:200]})"
    return f"Refused: {reason}. Nothing was run." if reason else None


class _RealPaths(dict[str, Path]):
    """`real_path` of each folder a check starts from, resolved once per check (never
    kept between checks: a link may change between two commands)."""

    def __call__(self, path: str) -> Path:
        found = self.get(path)
        if found is None:
            found = self[path] = real_path(Path(path))
        return found


async def check_command_async(
    command: str,
    root: Path,
    *,
    cwd: Path | None = None,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> str | None:
    """`check_command`, in a worker thread when the line is long."""
    if len(command) <= ASYNC_THRESHOLD:
        return check_command(command, root, cwd=cwd, home=home, env=env)
    return await asyncio.to_thread(check_command, command, root, cwd=cwd, home=home, env=env)


def _check_line(line: ParsedLine, ctx: CheckContext) -> str | None:
    for why in line.unknown_scripts:
        if not why.startswith(("eval ", "source ", ". ", "trap ")) or _decoded(line):
            return f"{why}, so what it would do cannot be checked"
    for name in line.functions:
        if any(
            c.program == name and c.origin == f"function {name}" and (c.in_pipeline or c.background)
            for c in line.commands
        ):
            return f"the function `{name}` calls itself in the background: a fork bomb that would exhaust the machine"
    if "IFS" in line.text and any(None in c.words for c in line.commands):
        return "words split on a changed IFS cannot be checked"
    cdpath = any("CDPATH" in c.assignments for c in line.commands) or "CDPATH" in line.text
    for cmd in line.commands:  # links the line makes: later writes through them go where they point
        if cmd.program == "ln" and any(a is not None and _SYMBOLIC.fullmatch(a) for a in cmd.args):
            note_link(list(cmd.args), ctx)
    # In execution order: a command's own redirections are judged from the cwd it runs in;
    # those of a compound (`{ …; } > f`, `done > f`) from every cwd the line passes through.
    own = {id(r) for c in line.commands for r in c.redirects}
    loose = [r for r in line.redirects if id(r) not in own]
    if reason := _check_redirects(loose, ctx):
        return reason
    return _check_commands(line.commands, ctx, loose, cdpath)


_FORKS = 4  # `cd` in a subshell: the rest is judged from both cwds, this many times at most


def _check_commands(
    commands: tuple[Command, ...], ctx: CheckContext, loose: list[Redirect], cdpath: bool
) -> str | None:
    """The commands in the order they run, the cwd following each `cd`. A `cd` whose effect
    may end before the next command (in a subshell, a pipe, `sh -c`) forks the walk: the
    rest is judged from the cwd before it too."""
    for i, cmd in enumerate(commands):
        if cmd.aborts:
            continue  # `${X:?}` with X unset: bash stops before running it
        home = dict(cmd.env).get("HOME", "")  # `~` is HOME as the line left it
        if home != ctx.tilde_from:
            ctx.tilde_from, ctx.tilde_unknown = home, home is None
            ctx.tilde = real_path(Path(home)) if home and home.startswith("/") else None
        if reason := _check_redirects(cmd.redirects, ctx):
            return reason
        if cmd.program in ("cd", "pushd", "popd"):
            before = dataclasses.replace(ctx)
            change_dir(cmd, ctx, cdpath)
            if loose and (reason := _check_redirects(loose, ctx)):
                return reason
            if cmd.scoped and before.cwd != ctx.cwd:
                if ctx.forks >= _FORKS:
                    ctx.cwd = None
                else:
                    ctx.forks += 1
                    before.forks = ctx.forks
                    if reason := _check_commands(commands[i + 1 :], before, loose, cdpath):
                        return reason
            continue
        if (
            is_shell(cmd.program or "", SHELLS)
            and not [a for a in cmd.args if a is None or not a.startswith("-")]
            and any(r.op == "<" and r.target is None for r in cmd.redirects)
        ):
            return f"{cmd.program} runs a script read from a substitution, so what it would do cannot be checked"
        if reason := _check_command(cmd, ctx):
            return reason
    return None


def _check_redirects(redirects: tuple[Redirect, ...] | list[Redirect], ctx: CheckContext) -> str | None:
    for redirect in redirects:
        if not redirect.writes or not redirect.target:
            continue
        truncates = redirect.op in (">", ">|", "&>")
        if reason := write_refusal(redirect.target, ctx, truncate=truncates):
            return reason
        if truncates and (reason := overwrite_refusal(redirect.target, ctx)):
            return f"`{redirect.op} {redirect.target}`: {reason}"
    return None


def _check_pieces(command: str, ctx: CheckContext) -> str | None:
    """A line tree-sitter could not parse: judge each piece between separators that parses."""
    for piece in _SEPARATOR.split(command):
        line = parse(piece, home=str(ctx.tilde or ctx.home), cwd=str(ctx.cwd or "/"), env=ctx.env)
        if line.parsed and line.commands and (reason := _check_line(line, ctx)):
            return reason
    return None


def _decoded(line: ParsedLine) -> bool:
    """Whether an `eval` of unknown text may run decoded or downloaded text."""
    subs = [c for c in line.commands if c.origin == "$(…)"]
    return not subs or any(c.program is None or c.program in DECODERS for c in subs)


def _shown(cmd: Command) -> str:
    words = (*cmd.wrappers, *cmd.words)
    return shlex.join(w[:100] + "…" * (len(w) > 100) if w is not None else "…" for w in words[:20])


def _check_command(cmd: Command, ctx: CheckContext) -> str | None:
    name, args = cmd.program, list(cmd.args)
    shown = _shown(cmd)
    if name is None:
        if _recursive(args) and (reason := _check_delete(shown, args, ctx, cmd)):
            return f"{reason} (the program is not a literal, it may be rm)"
        return None
    known = [a for a in args if a is not None]
    if name in ("sed", "perl") and (kept := in_place(known)) is not None:
        for target in edited_files(name, args):  # `sed -i '$a …' ~/.bashrc` plants code too
            lost = None if kept else overwrite_refusal(target, ctx)  # `-i.bak` keeps the original
            if reason := write_refusal(target, ctx, truncate=False) or lost:
                return f"`{shown}`: {reason}"
    if is_interpreter(name, INTERPRETERS):
        return _check_code(shown, cmd, ctx)
    if _MKFS.match(name):
        return f"`{shown}` formats or wipes a disk"
    if name in _PARTITIONERS and not {"-l", "--list", "print", "-p"} & set(known):
        return f"`{shown}` rewrites a disk's partition table"
    if name in _POWER or (name in ("init", "telinit") and known[:1] in (["0"], ["6"])):
        return f"`{shown}` would shut down or reboot the machine"
    if name in ("systemctl", "loginctl") and _POWER_VERBS & set(known):
        return f"`{shown}` would shut down or suspend the machine"
    if name in ("kill", "pkill", "killall5") and (name == "killall5" or _kills_everything(known)):
        return f"`{shown}` would kill every process (or init)"
    if name == "crontab" and "-r" in known:
        return f"`{shown}` deletes your crontab"
    if name == "crontab" and not {"-l", "-r"} & set(known):
        return f"`{shown}` installs a crontab: commands that would run on a schedule, out of sight"
    if name in ("rm", "unlink", "shred", "srm", "rmdir"):
        return _check_delete(shown, args, ctx, cmd)
    if name == "find":
        return _check_find(shown, args, ctx, cmd)
    if name == "rsync" and (reason := _check_targets(shown, deletes_in(args), ctx, "would delete files in")):
        return reason
    if name == "truncate":
        return _check_targets(shown, _positional(args, takes={"-s", "--size", "-r", "--reference"}), ctx, "would empty")
    if name in ("chmod", "chown", "chgrp"):
        return _check_permissions(shown, name, args, ctx)
    if name == "git":
        return check_git(shown, cmd, ctx)
    if (found := writes(name, args)) is not None:  # cp, mv, install, ln, tee, rsync, tar, cpio, unzip
        for w in found:
            if reason := judge_write(w, ctx):
                return f"`{shown}`: {reason}"
        if name == "mv":
            return _check_move(shown, [s for w in found for s in w.sources if s is not None], ctx)
    if reason := host_refusal(name, args, ctx):
        return f"`{shown}` {reason}"
    if name == "dd":
        for a in known:
            if a.startswith("of=") and (reason := write_refusal(a[3:], ctx, truncate=True) or _outside(a[3:], ctx)):
                return f"`{shown}`: {reason}"
        if any(a is None for a in args):
            return f"`{shown}` writes to a target that is not a literal"
    return None


def _recursive(args: list[str | None]) -> bool:
    return any(
        a is not None and (a in ("--recursive", "-R") or re.fullmatch(r"-[a-zA-Z]*[rR][a-zA-Z]*", a)) for a in args
    )


def _positional(args: list[str | None], takes: set[str] | None = None) -> list[str | None]:
    out: list[str | None] = []
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a is not None and a.startswith("-") and a != "-":
            skip = a in (takes or set())
        else:
            out.append(a)
    return out


def _outside(target: str, ctx: CheckContext) -> str | None:
    resolved = resolve_word(target, ctx)
    if resolved is None:
        return f"its target `{target}` is not known"
    text = str(resolved[0])
    if text.startswith("/dev/") and text[5:].partition("/")[0] in SAFE_DEVICES:
        return None
    where = off_limits(resolved[0], ctx, root_ok=False)
    return f"it would destroy {where}" if where else None


def _check_targets(shown: str, targets: list[str | None], ctx: CheckContext, verb: str) -> str | None:
    for target in targets:
        if target is None:
            return f"`{shown}` {verb} a target that is not a literal"
        resolved = resolve_word(target, ctx)
        if resolved is None:
            return f"`{shown}` {verb} `{target}`, which cannot be known"
        if where := off_limits(resolved[0], ctx, root_ok=True):
            return f"`{shown}` {verb} {where}"
    return None


def _check_code(shown: str, cmd: Command, ctx: CheckContext) -> str | None:
    """Code given to an interpreter (`python -c`, `perl -e`, `awk '…'`): fork bombs, rmtree
    of / or ~, and any quoted shell command in it that would be refused."""
    code = " ".join(a for a in cmd.args if a is not None)
    if cmd.stdin:
        code += "\n" + cmd.stdin
    if _CODE_FORK.search(code):
        return f"`{shown[:200]}` is a fork bomb, it would exhaust the machine's processes"
    if _CODE_RMTREE.search(code):
        return f"`{shown[:200]}` deletes the filesystem or your home directory"
    if ctx.depth >= 2:
        return None
    ctx.depth += 1
    try:
        for text in code_strings(code):
            if " " in text and (
                reason := _check_line(parse(text, home=str(ctx.home), cwd=str(ctx.cwd or "/"), env=ctx.env), ctx)
            ):
                return f"`{shown[:200]}` runs a shell command: {reason}"
    finally:
        ctx.depth -= 1
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


def _check_delete(shown: str, args: list[str | None], ctx: CheckContext, cmd: Command) -> str | None:
    known = [a for a in args if a is not None]
    if "--no-preserve-root" in known:
        return f"`{shown}` uses --no-preserve-root, which lets rm delete /"
    recursive = _recursive(args)
    split = args.index("--") if "--" in args else len(args)
    targets = [a for a in args[:split] if a is None or not a.startswith("-") or a == "-"] + args[split + 1 :]
    for target in targets:
        if target is None:
            if recursive:
                return f"`{shown}` would recursively delete a path that is not a literal (a variable or `$(…)`)"
            continue
        if target == "":
            continue  # `rm ""` fails: nothing is deleted
        resolved = resolve_word(target, ctx)
        if resolved is None and recursive:
            return f"`{shown}` would recursively delete `{target}`, which cannot be known"
        if resolved and (where := off_limits(resolved[0], ctx, root_ok=resolved[1])):
            return f"`{shown}` would delete {where}"
    if cmd.args_from_stdin and recursive and _from_file(cmd):
        return None
    if cmd.args_from_stdin and recursive and not _listed_inside(cmd, ctx):
        return f"`{shown}` would recursively delete paths read from its input, which cannot be known"
    if cmd.args_from_stdin and recursive and not _null_separated(cmd):
        return (
            f"`{shown}` would recursively delete names split on blanks: a folder named `a ` holding `etc` "
            "lists as `./a /etc`, which becomes /etc. Use `find … -print0 | xargs -0` or `find … -exec rm -r {} +`"
        )
    return None


def _null_separated(cmd: Command) -> bool:
    """xargs reading NUL- or newline-separated names (`-0`, `--null`, `-d '\\n'`)."""
    written = [w for w in cmd.written if w is not None]
    if "xargs" not in [os.path.basename(w) for w in written]:
        return True  # the names do not come through xargs (`while read`, …): not this case
    return any(w in ("-0", "--null") or w.startswith(("-d", "--delimiter")) or w.startswith("-0") for w in written)


def _from_file(cmd: Command) -> bool:
    """`xargs rm -r < list.txt`, `cat list.txt | xargs …`, `xargs -a list.txt`: names the user
    wrote into a file (not names someone else's files chose, as a lister's are)."""
    if any(r.op == "<" and r.target is not None and not is_device(r.target) for r in cmd.redirects):
        return True
    source = cmd.stdin_from
    if source and source[0] is not None and os.path.basename(source[0]) == "cat" and None not in source:
        return len(source) > 1 and not any(is_device(str(a)) for a in source[1:])
    written = [w for w in cmd.written if w is not None]
    return any(w in ("-a", "--arg-file") or w.startswith("--arg-file=") for w in written)


def _listed_inside(cmd: Command, ctx: CheckContext) -> bool:
    """`find . … | xargs rm -r`: the paths come from a lister looking inside the workspace."""
    source = cmd.stdin_from
    if not source or source[0] is None or os.path.basename(source[0]) not in _LISTERS or None in source:
        return False
    words = [w for w in source[1:] if w is not None and not w.startswith("-")]
    if os.path.basename(str(source[0])) != "find":
        return not any(w.startswith(("/", "~", "..")) for w in words)
    starts = _find_starts(list(source[1:]))
    return all(
        s is not None and (r := resolve_word(s, ctx)) and not off_limits(r[0], ctx, root_ok=True)
        for s in starts or ["."]
    )


def _find_starts(args: list[str | None]) -> list[str | None]:
    starts: list[str | None] = []
    i = 0
    while i < len(args) and (args[i] in ("-H", "-L", "-P") or str(args[i]).startswith(("-O", "-D"))):
        i += 2 if args[i] == "-D" else 1
    for arg in args[i:]:
        if arg is not None and (arg.startswith("-") or arg in ("(", "!", ")")):
            break
        starts.append(arg)
    return starts


def _check_find(shown: str, args: list[str | None], ctx: CheckContext, cmd: Command) -> str | None:
    starts = _find_starts(args)
    known = [a for a in args if a is not None]
    deletes = "-delete" in known
    for i, arg in enumerate(args):
        if arg in ("-exec", "-execdir", "-ok", "-okdir") and i + 1 < len(args):
            inner = list(args[i + 1 :])
            inner = inner[: next((k for k, a in enumerate(inner) if a in (";", "+")), len(inner))]
            sub = parse(shlex.join(w if w is not None else "$UNKNOWN" for w in inner), home=str(ctx.home))
            for c in sub.commands:
                deletes = deletes or c.program in ("rm", "shred", "unlink", "mv", "truncate", None, *SHELLS)
                if reason := _check_command(c, ctx):
                    return reason
    if not deletes:
        return None
    for start in starts or ["."]:
        if start is None:
            return f"`{shown}` would delete files under a path that is not a literal"
        resolved = resolve_word(start, ctx)
        if resolved is None:
            return f"`{shown}` would delete files under `{start}`, which cannot be known"
        if where := off_limits(resolved[0], ctx, root_ok=True):
            return f"`{shown}` would delete files under {where}"
    return None


def _check_permissions(shown: str, name: str, args: list[str | None], ctx: CheckContext) -> str | None:
    recursive, positional = False, []
    for arg in args:
        if arg is not None and (arg == "--recursive" or re.fullmatch(r"-[RfvcHLP]*R[RfvcHLP]*", arg)):
            recursive = True
        elif arg is not None and (arg.startswith("--") or re.fullmatch(r"-[fvcHLP]+", arg)):
            continue
        else:
            positional.append(arg)
    if not any(a is not None and a.startswith("--reference") for a in args):
        positional = positional[1:]  # the mode or owner
    for target in positional:
        if target is None:
            if recursive:
                return f"`{shown}` would change the permissions of a path that is not a literal"
            continue
        resolved = resolve_word(target, ctx)
        if resolved is None:
            if recursive:
                return f"`{shown}` would change the permissions of `{target}`, which cannot be known"
            continue
        if where := off_limits(resolved[0], ctx, root_ok=True) if recursive else system_path(resolved[0]):
            return f"`{shown}` would change the permissions or owner of {where}"
    return None


def _check_move(shown: str, sources: list[str], ctx: CheckContext) -> str | None:
    for source in sources:
        real = (resolve_word(source, ctx) or (None, False))[0]
        if real and (real in (Path("/"), ctx.home) or real in ctx.root.parents or system_path(real)):
            return f"`{shown}` would move {real} away, breaking the system or the workspace"
    return None
