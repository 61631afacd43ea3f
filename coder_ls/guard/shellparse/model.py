"""The facts `shellparse` gives about a shell line, and the program sets it knows."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

MAX_DEPTH = 6  # nested `sh -c` / `eval` levels; deeper is "unparsed"
MAX_COMMANDS = 10_000  # a line with more simple commands is not looked into further

SHELLS = frozenset("sh bash dash zsh ksh ash mksh fish".split())
INTERPRETERS = frozenset(
    "python python2 python3 pypy pypy3 node nodejs deno bun ruby perl php lua luajit awk gawk mawk nawk "
    "osascript Rscript tclsh jshell".split()
)
# program -> options that take a separate value (their `-xVALUE` forms need none)
WRAPPERS: dict[str, frozenset[str]] = {
    name: frozenset(opts.split())
    for name, opts in {
        "command": "",
        "busybox": "",
        "toybox": "",
        "builtin": "",
        "exec": "-a",
        "env": "-u -C -S --unset --chdir --split-string",
        "sudo": "-u -g -p -C -D -h -R -r -t -U -T --user --group --prompt --chdir",
        "doas": "-u -C",
        "nice": "-n --adjustment",
        "ionice": "-c -n -p -P -u",
        "nohup": "",
        "setsid": "",
        "timeout": "-s -k --signal --kill-after",
        "stdbuf": "-i -o -e",
        "time": "-f -o --format --output",
        "xargs": "-a -d -E -I -L -n -P -s --arg-file --delimiter --max-args --max-procs --replace",
        "coproc": "",
        "chrt": "",
        "taskset": "",
        "unbuffer": "",
        "flock": "-w -E --timeout --conflict-exit-code",
        "caffeinate": "",
        "watch": "-n -d --interval",
        "chroot": "",
        "runuser": "-u -g",
        "strace": "-o -e -p -s",
        "ltrace": "-o -e",
        "firejail": "",
        "proxychains": "",
        "setpriv": "--reuid --regid --groups --inh-caps --ambient-caps --bounding-set --securebits "
        "--selinux-label --apparmor-profile --pdeathsig --landlock-access --landlock-rule",
        "unshare": "-S -G -R -w --setuid --setgid --root --wd --map-user --map-group --map-users --map-groups "
        "--propagation",
        "nsenter": "-t -S -G -r -w --target --setuid --setgid --root --wd",
        "systemd-run": "-p -u -E -M -H --unit --property --setenv --uid --gid --machine --host --working-directory "
        "--description --slice",
        "pkexec": "--user",
        "prlimit": "-p --pid",
        "numactl": "-C -N -m -p -i --physcpubind --cpunodebind --membind --preferred --interleave",
        "faketime": "-m -f",
        "fakeroot": "-l -s -i --lib --faked",
        "eatmydata": "",
        "nocache": "-n",
        "torsocks": "-u -p -a -P",
        "chronic": "",
        "catchsegv": "",
        "dbus-run-session": "--config-file --dbus-daemon",
        "xvfb-run": "-n -s -f -e -p --server-num --server-args --auth-file --error-file",
        "sg": "",
        "cgexec": "-g",
        "parallel": "-j -S --jobs --sshlogin -a --arg-file",
    }.items()
}
TAKES_POSITIONAL = {"timeout": 1, "chrt": 1, "taskset": 1, "flock": 1, "chroot": 1, "sg": 1}
# variables that change what a later program acts on: a command keeps their values
TOOL_ENV = ("GIT_DIR", "GIT_WORK_TREE", "HOME", "CDPATH")
DECODERS = frozenset(
    "base64 base32 basenc xxd openssl gzip gunzip zcat bzcat bzip2 xz xzcat unxz zstd rev tr curl wget "
    "nc ncat socat dig uudecode gpg cat head tail sed awk perl python python3 ruby node echo printf".split()
)
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\+?=")
ANSI = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "v": "\v"}
WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>"})


@dataclass(frozen=True)
class Redirect:
    op: str  # `>`, `>>`, `&>`, `<`, `<<`, `<<<`, …
    target: str | None  # the literal target; None when it is not a literal
    fd: str = ""

    @property
    def writes(self) -> bool:
        return self.op in WRITE_OPS and not (self.op == ">&" and (self.target or "").isdigit())


@dataclass(frozen=True)
class Command:
    """One simple command that may run, seen through its wrappers."""

    words: tuple[str | None, ...]  # program and arguments after unwrapping; None = not a literal
    written: tuple[str | None, ...] = ()  # `VAR=x`, wrappers and all, as written
    wrappers: tuple[str, ...] = ()  # `sudo`, `env`, `xargs`, … around it, outermost first
    redirects: tuple[Redirect, ...] = ()
    assignments: tuple[str, ...] = ()  # names assigned for this command (`CDPATH=… cd x`)
    origin: str = ""  # "" at top level; "function f", "sh -c", "eval", "here-doc", "pipe", "$(…)"
    stdin: str | None = ""  # a script fed on standard input: "" none, text if literal, None if unknown
    stdin_from: tuple[str | None, ...] = ()  # the words of the command piping into this one
    args_from_stdin: bool = False  # xargs appends words we cannot see
    in_pipeline: bool = False  # a `|` or `&` runs it beside others (fork-bomb shape)
    background: bool = False
    env: tuple[tuple[str, str | None], ...] = ()  # TOOL_ENV values in effect (None: not known)
    aborts: bool = False  # an expansion stops it before it runs (`${X:?}` with X unset)
    scoped: bool = False  # runs in a shell of its own (subshell, pipe, `&`, `sh -c`): a `cd` ends with it

    @property
    def program(self) -> str | None:
        """The basename of the program (`rm` for `/bin/rm`), or None if not a literal."""
        first = self.words[0] if self.words else None
        return None if first is None else os.path.basename(first) or first

    @property
    def args(self) -> tuple[str | None, ...]:
        return self.words[1:]


@dataclass(frozen=True)
class ParsedLine:
    text: str
    parsed: bool  # False when the tree has an error, or nesting went too deep
    commands: tuple[Command, ...]
    redirects: tuple[Redirect, ...]  # every redirection in the line
    functions: tuple[str, ...] = ()  # names of the functions it defines
    unknown_scripts: tuple[str, ...] = ()  # scripts run that cannot be seen (`… | sh`, `eval "$x"`)
