"""What a parsed line visibly reaches beyond reading: the paths it writes (its redirections
and the targets of the programs that write by name: `cp`, `mv`, `touch`, `tee`, `sed -i`,
`dd of=`, …) and the network it asks for (a program that only talks to the network, or a
subcommand that fetches, and the hosts of the URLs it names).

"Visibly": a word that is not a literal, or a relative path after a `cd` in the same line,
is not a place anyone can name before the line runs; the callers decide what an unknown
means (the policy runs such a line in the sandbox, which holds whatever it writes).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from coder_ls.guard.shellparse.model import Command, ParsedLine

# program -> options whose value is the next word (so that it is not taken for an operand)
_VALUED: dict[str, frozenset[str]] = {
    "cp": frozenset({"-t", "-S", "--suffix", "--target-directory"}),
    "mv": frozenset({"-t", "-S", "--suffix", "--target-directory"}),
    "ln": frozenset({"-t", "-S", "--suffix", "--target-directory"}),
    "install": frozenset(
        {"-t", "-S", "-m", "-o", "-g", "--suffix", "--mode", "--owner", "--group", "--target-directory"}
    ),
    "mkdir": frozenset({"-m", "--mode", "--context"}),
    "touch": frozenset({"-d", "-r", "-t", "--date", "--reference"}),
    "truncate": frozenset({"-s", "-r", "--size", "--reference"}),
    "shred": frozenset({"-n", "-s", "--iterations", "--size", "--random-source"}),
    "sed": frozenset({"-e", "-f", "-l", "--expression", "--file", "--line-length"}),
    "perl": frozenset({"-e", "-E", "-I", "-M", "-m"}),
    "tee": frozenset(),
    "rm": frozenset(),
    "rmdir": frozenset(),
    "unlink": frozenset(),
}
_EVERY_OPERAND = frozenset({"touch", "mkdir", "rm", "rmdir", "unlink", "truncate", "shred", "tee"})
_LAST_OPERAND = frozenset({"cp", "mv", "ln", "install"})
_OWNERS = frozenset({"chmod", "chown", "chgrp"})  # MODE/OWNER first, then the files

# Programs that only talk to the network, and subcommands that fetch (the first word after
# the program's global options).
NETWORK_PROGRAMS = frozenset(
    "curl wget ssh scp sftp nc ncat netcat socat telnet ftp ping ping6 dig nslookup host whois "
    "git-lfs aria2c http https xh gh".split()
)
NETWORK_SUBCOMMANDS: dict[str, frozenset[str]] = {
    "git": frozenset({"push", "pull", "fetch", "clone", "ls-remote", "submodule", "remote-update"}),
    "npm": frozenset({"install", "i", "add", "ci", "update", "publish", "view", "info", "audit", "outdated", "login"}),
    "pnpm": frozenset({"install", "i", "add", "update", "up", "publish", "dlx", "fetch", "outdated", "audit"}),
    "yarn": frozenset({"install", "add", "upgrade", "up", "publish", "dlx", "info", "npm"}),
    "bun": frozenset({"install", "i", "add", "update", "x", "publish"}),
    "npx": frozenset(),  # downloads the package it runs when it is not installed
    "pip": frozenset({"install", "download", "search", "index"}),
    "pip3": frozenset({"install", "download", "search", "index"}),
    "pipx": frozenset({"install", "run", "upgrade", "inject"}),
    "uv": frozenset({"add", "sync", "lock", "pip", "tool"}),
    "poetry": frozenset({"install", "add", "update", "lock", "publish"}),
    "cargo": frozenset({"install", "fetch", "update", "publish", "search", "add"}),
    "go": frozenset({"get", "install"}),
    "gem": frozenset({"install", "update", "fetch", "push"}),
    "bundle": frozenset({"install", "update"}),
    "composer": frozenset({"install", "require", "update"}),
    "apt": frozenset({"install", "update", "upgrade", "download"}),
    "apt-get": frozenset({"install", "update", "upgrade", "download"}),
    "brew": frozenset({"install", "update", "upgrade", "fetch", "tap"}),
    "docker": frozenset({"pull", "push", "login", "search"}),
    "podman": frozenset({"pull", "push", "login", "search"}),
}
_URL = re.compile(r"\b(?:https?|ftp|wss?|git|ssh)://(?:[^@/\s]*@)?(\[[^\]]+\]|[A-Za-z0-9.-]+)")
_SCP_LIKE = re.compile(r"^(?:[A-Za-z0-9._-]+@)?([A-Za-z0-9.-]+\.[A-Za-z]{2,}):")


@dataclass(frozen=True)
class Write:
    """A path the line writes, as written, and whether a `cd` earlier in the line makes a
    relative one unknowable."""

    target: str
    after_cd: bool = False
    by: str = ""  # "a redirection", "cp", …


def _operands(cmd: Command, valued: frozenset[str]) -> list[str | None]:
    out: list[str | None] = []
    skip = False
    ended = False
    for w in cmd.args:
        if skip:
            skip = False
        elif ended or w is None or not w.startswith("-") or w == "-":
            out.append(w)
        elif w == "--":
            ended = True
        elif w in valued:
            skip = True
    return out


def _target_dir(cmd: Command) -> str | bool | None:
    """`-t DIR` / `--target-directory=DIR` (False: none given)."""
    args = cmd.args
    for i, w in enumerate(args):
        if w in ("-t", "--target-directory"):
            return args[i + 1] if i + 1 < len(args) else None
        if w is not None and w.startswith("--target-directory="):
            return w.partition("=")[2]
        if w is not None and re.fullmatch(r"-[a-zA-Z]*t.+", w) and not w.startswith("--"):
            return w[w.index("t") + 1 :]
    return False


def command_writes(cmd: Command) -> Iterator[str | None]:
    """The paths a known writer writes (None: one that is not a literal)."""
    program = cmd.program
    if program is None:
        return
    if program == "dd":
        for w in cmd.args:
            if w is None:
                yield None
            elif w.startswith("of="):
                yield w[3:]
        return
    if program in ("sed", "perl"):
        shorts = [w for w in cmd.args if w is not None and re.fullmatch(r"-[A-Za-z]+.*", w)]
        if not any("i" in w for w in shorts) and "--in-place" not in cmd.args:
            return
        code = "eE" if program == "perl" else "ef"
        explicit = any(w[1] in code or (program == "sed" and w[1] == "n" and "e" in w) for w in shorts) or any(
            w is not None and w.startswith(("--expression", "--file")) for w in cmd.args
        )
        operands = _operands(cmd, _VALUED[program])
        yield from operands if explicit else operands[1:]  # else the first operand is the script
        return
    if program in _OWNERS:
        yield from _operands(cmd, frozenset({"--reference"}))[1:]
        return
    if program in _EVERY_OPERAND:
        yield from _operands(cmd, _VALUED[program])
        return
    if program in _LAST_OPERAND:
        target = _target_dir(cmd)
        if target is not False:
            yield target  # type: ignore[misc]
            return
        operands = _operands(cmd, _VALUED[program])
        if len(operands) >= 2:
            yield operands[-1]
        elif program == "ln" and len(operands) == 1:
            yield os.path.basename(operands[0] or "") or None  # `ln -s /x`: a link named x here
        return


def writes(line: ParsedLine) -> tuple[list[Write], bool]:
    """(the visible writes, whether some write's place is not visible)."""
    moves = any(c.program in ("cd", "pushd", "popd") for c in line.commands)
    seen: list[Write] = []
    hidden = False

    def add(target: str | None, by: str) -> None:
        nonlocal hidden
        if target is None or "$" in target or target == "":
            hidden = True
            return
        if target.isdigit() or target == "-":
            return
        seen.append(Write(target, moves and not target.startswith(("/", "~")), by))

    for r in line.redirects:
        if r.writes:
            add(r.target, "a redirection")
    for cmd in line.commands:
        for target in command_writes(cmd):
            add(target, cmd.program or "")
    return seen, hidden


def _subcommand(words: tuple[str | None, ...]) -> str | None:
    """The first word after the program that is not an option (`git -C x push` -> push)."""
    skip = False
    for w in words[1:]:
        if w is None:
            return None
        if skip:
            skip = False
            continue
        if w in ("-C", "-c", "--git-dir", "--work-tree", "--prefix", "--cwd", "--dir", "-m"):
            skip = True
            continue
        if w.startswith("-"):
            continue
        return w
    return ""


def network_program(cmd: Command) -> str | None:
    """`curl`, `git push`, `npm install`, `python -m pip install`: what in this command
    needs the network, or None."""
    program = cmd.program
    if program is None:
        return None
    if program in NETWORK_PROGRAMS:
        return program
    if program == "rsync":  # remote only with `host:path`, `host::module` or `rsync://`
        remote = any(w is not None and re.match(r"^(rsync://|[^/\s]+:)", w) for w in cmd.args)
        return "rsync" if remote else None
    if program.startswith("python") and "-m" in cmd.args:
        i = cmd.args.index("-m")
        module = cmd.args[i + 1] if i + 1 < len(cmd.args) else None
        if module in ("pip", "pip3") and "install" in cmd.args[i + 2 :]:
            return f"{program} -m pip install"
        return None
    subs = NETWORK_SUBCOMMANDS.get(program)
    if subs is None:
        return None
    if not subs:
        return program
    sub = _subcommand(cmd.words)
    return f"{program} {sub}" if sub in subs else None


def hosts(line: ParsedLine) -> list[str]:
    """The hosts of the URLs the line names (`https://x/…`, `git@host:repo`), lower case."""
    found: list[str] = []
    for cmd in line.commands:
        for w in cmd.words:
            if w is None:
                continue
            for m in _URL.finditer(w):
                found.append(m.group(1).strip("[]").lower())
            if (m2 := _SCP_LIKE.match(w)) and "://" not in w:
                found.append(m2.group(1).lower())
    return list(dict.fromkeys(found))


def network_needs(line: ParsedLine) -> list[str]:
    """What in the line needs the network: its network programs and subcommands."""
    return list(dict.fromkeys(n for c in line.commands if (n := network_program(c))))
