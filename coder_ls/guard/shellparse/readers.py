"""Which parsed shell lines only read: the policy runs them without a question in every
preset but `strict` (contract section 20), sandboxed or not.

A line is read-only when it parsed, runs no text that cannot be seen, defines no function,
and every simple command in it (substitutions, `<(…)`, pipes and `find -exec` included) is a
known reader written as a bare name (or `/bin/`, `/usr/bin/`), with every word a literal, no
wrapper (`env X`, `sudo`, `xargs`, `timeout`), no assignment before it (`PAGER=… git log`,
`LD_PRELOAD=… ls`) and no option that writes a file or runs a program. Its redirections
write nowhere but `/dev/null`, `/dev/stdout`, `/dev/stderr` or another descriptor
(`2>/dev/null`, `>&2`, `2>&1`), and read from literal files that are not bash's network
names (`/dev/tcp/…`).

The table is written from the manuals (GNU coreutils, findutils, grep, ripgrep 14, tree 2,
file 5, jq 1.7, git 2.4x): for each reader, the options that write or run. A long option
counts abbreviated too (`--out=f` is GNU getopt's `--output=f`), a short one inside a bundle
(`-uo f`); a word that only looks like such an option (a pattern `-o` after `-e`, an operand
after `--`) is refused too: a false "asks" costs a question, a false "reads" a write.
What the table cannot see: a reader the persistent shell has redefined (a function, an
alias, a `PATH` entry an earlier command exported) runs what that earlier command, which
was asked about or sandboxed, put there.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from coder_ls.guard.shellparse.model import Command, ParsedLine

Words = tuple[str, ...]
Check = Callable[[Words], "str | None"]

QUIET_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
SYSTEM_BINS = ("/bin/", "/usr/bin/")
_SHORT = re.compile(r"-[A-Za-z0-9]")


@dataclass(frozen=True)
class Reader:
    """One reader: what in its words would make it write or run something."""

    long_no: frozenset[str] = frozenset()  # long options (also abbreviated, also `--x=v`)
    short_no: str = ""  # short option letters (also inside a bundle)
    # short options whose value is the rest of the bundle (`sort -to`: `o` is the separator);
    # only letters the manual says take a value: one listed wrongly would hide what follows
    short_valued: str = ""
    words_no: frozenset[str] = frozenset()  # whole words (find's `-exec`)
    check: Check | None = None  # anything else (git's subcommands, uniq's output operand)


def _long_hit(word: str, names: frozenset[str]) -> str | None:
    """The forbidden long option `word` spells, whole or abbreviated (`--out` for `--output`)."""
    if not word.startswith("--") or len(word) < 3:
        return None
    name = word[2:].split("=", 1)[0]
    return next((f"--{n}" for n in sorted(names) if n.startswith(name)), None)


def _short_hit(word: str, letters: str, valued: str = "") -> str | None:
    if not letters or word.startswith("--") or not _SHORT.match(word):
        return None
    for c in word[1:]:
        if c in letters:
            return f"-{c}"
        if c in valued:
            return None  # the rest of the word is this option's value
    return None


def _options(words: Words, reader: Reader) -> str | None:
    for w in words:
        if w in reader.words_no:
            return w
        if (hit := _long_hit(w, reader.long_no)) or (hit := _short_hit(w, reader.short_no, reader.short_valued)):
            return hit
    return None


# --- readers with a check of their own ---------------------------------------------------


def _operands(words: Words, valued: frozenset[str]) -> list[str]:
    """The words that are not options or option values (`valued`: options whose value is
    the next word)."""
    out: list[str] = []
    skip = False
    for w in words:
        if skip:
            skip = False
        elif w in valued:
            skip = True
        elif not w.startswith("-") or w == "-":
            out.append(w)
    return out


def _uniq(words: Words) -> str | None:
    """`uniq IN OUT` writes OUT."""
    valued = frozenset({"-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"})
    return "a second operand (uniq writes it)" if len(_operands(words, valued)) > 1 else None


def _command(words: Words) -> str | None:
    """`command -v NAME` only names a program; `command NAME` runs it."""
    return None if words[:1] in (("-v",), ("-V",)) else "`command` runs a program"


GIT_GLOBAL_OK = frozenset(
    {
        "--no-pager",
        "-P",
        "--no-optional-locks",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--no-replace-objects",
    }
)
# git options that write a file or run a program, on every reading subcommand
GIT_LONG_NO = frozenset({"output", "ext-diff", "open-files-in-pager", "upload-pack", "exec"})
_BRANCH_LONG_NO = frozenset(
    {
        "delete",
        "move",
        "copy",
        "force",
        "set-upstream-to",
        "set-upstream",
        "unset-upstream",
        "edit-description",
        "track",
        "no-track",
        "create-reflog",
        "recurse-submodules",
    }
)
_BRANCH_VALUED = frozenset(
    {"--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format", "--abbrev"}
)
_TAG_LONG_NO = frozenset(
    {
        "annotate",
        "sign",
        "local-user",
        "force",
        "delete",
        "verify",
        "message",
        "file",
        "edit",
        "create-reflog",
        "cleanup",
    }
)
_CONFIG_READS = frozenset(
    {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "--list", "-l"}
)
_CONFIG_LONG_NO = frozenset(
    {"add", "unset", "unset-all", "replace-all", "rename-section", "remove-section", "edit", "set", "append"}
)


def _listing(sub: str, args: Words, long_no: frozenset[str], short_no: str) -> str | None:
    """`git branch` / `git tag` as a listing: nothing that makes, moves or deletes one,
    and a name only after `--list`/`-l` or as an option's value."""
    if hit := _options(args, Reader(long_no=long_no, short_no=short_no)):
        return f"`git {sub} {hit}` changes {sub}es" if sub == "branch" else f"`git tag {hit}` changes tags"
    listing = any(a in ("-l", "--list") or (_SHORT.match(a) and not a.startswith("--") and "l" in a) for a in args)
    if not listing and _operands(args, _BRANCH_VALUED):
        return f"`git {sub} NAME` makes a {sub}"
    return None


def _git(words: Words) -> str | None:
    i = 0
    while i < len(words) and words[i].startswith("-"):
        w = words[i]
        if w == "-C" and i + 1 < len(words):
            i += 2
            continue
        if w not in GIT_GLOBAL_OK:
            return f"git's global option {w} (it may run a program or change what git reads)"
        i += 1
    if i >= len(words):
        return "git with no subcommand"
    sub, args = words[i], words[i + 1 :]
    if hit := _options(args, Reader(long_no=GIT_LONG_NO)):
        return f"`git {sub} {hit}` writes a file or runs a program"
    if sub in ("status", "diff", "log", "show", "blame", "rev-parse", "ls-files", "describe", "ls-tree"):
        return None
    if sub in ("rev-list", "merge-base", "show-ref", "version", "shortlog"):
        return None
    if sub == "remote":
        if all(a in ("-v", "--verbose") for a in args) or args[:1] == ("get-url",):
            return None
        return "`git remote` other than listing"
    if sub == "branch":
        return _listing("branch", args, _BRANCH_LONG_NO, "dDmMcCfut")
    if sub == "tag":
        return _listing("tag", args, _TAG_LONG_NO, "asufdvmFe")
    if sub == "stash":
        return None if args[:1] in (("list",), ("show",)) else "`git stash` other than list or show"
    if sub == "config":
        if hit := _options(args, Reader(long_no=_CONFIG_LONG_NO, short_no="e")):
            return f"`git config {hit}` changes the configuration"
        if any(a in _CONFIG_READS for a in args) or args[:1] in (("get",), ("list",)):
            return None
        return "`git config` that is not `--get` or `--list`"
    return f"`git {sub}` is not a reading git command"


# program -> what it must not be given. From the manuals:
READERS: dict[str, Reader] = {
    **dict.fromkeys(
        (
            "ls cat head tail wc grep egrep fgrep pwd echo printf which type stat du df cut diff cmp jq "
            "realpath dirname basename uname whoami id printenv env cd true false test tac nl comm paste "
            "seq readlink sha256sum sha1sum sha512sum md5sum cksum od nproc arch hostid"
        ).split(),
        Reader(),
    ),
    # ripgrep: --pre runs a program on each file (--pre-glob picks which), -z/--search-zip
    # runs decompressors, --hostname-bin runs a program for hyperlinks
    "rg": Reader(
        long_no=frozenset({"pre", "pre-glob", "search-zip", "hostname-bin"}), short_no="z", short_valued="efgtTmABC"
    ),
    "find": Reader(
        words_no=frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"})
    ),
    "tree": Reader(long_no=frozenset({"output"}), short_no="oR"),  # -o FILE; -R writes 00Tree.html
    "sort": Reader(long_no=frozenset({"output", "compress-program"}), short_no="o", short_valued="ktST"),
    "file": Reader(long_no=frozenset({"compile"}), short_no="C"),  # -C writes magic.mgc
    "date": Reader(long_no=frozenset({"set"}), short_no="s", short_valued="dfrI"),  # -s sets the clock
    "uniq": Reader(check=_uniq),
    "command": Reader(check=_command),
    "git": Reader(check=_git),
}


def _program_word(word: str) -> bool:
    """A reader is run by its bare name or from the system's own folders, never `./ls`."""
    return "/" not in word or any(word.startswith(p) and "/" not in word[len(p) :] for p in SYSTEM_BINS)


def command_not_read_only(cmd: Command) -> str | None:
    """Why this simple command is not a known reader, or None when it only reads."""
    words = cmd.words
    if not words or any(w is None for w in words):
        return "a word that is not a literal"
    literal: Words = tuple(w for w in words if w is not None)
    if cmd.wrappers:
        return f"it runs through {cmd.wrappers[0]}"
    if cmd.assignments or cmd.args_from_stdin:
        return "variables set for the command" if cmd.assignments else "words read from its input"
    first = literal[0]
    name = os.path.basename(first) or first
    if not _program_word(first):
        return f"{first} is not a system program"
    reader = READERS.get(name)
    if reader is None:
        return f"{name} is not a known reader"
    args = literal[1:]
    if name == "env" and args and not all(a in ("-0", "--null") for a in args):
        return "env with arguments"
    if hit := _options(args, reader):
        return f"`{name} {hit}` writes a file or runs a program"
    if reader.check is not None and (why := reader.check(args)):
        return why
    return None


def not_read_only(line: ParsedLine) -> str | None:
    """Why the line is not read-only, or None when every part of it only reads."""
    if not line.parsed:
        return "the line does not parse"
    if line.unknown_scripts:
        return line.unknown_scripts[0]
    if line.functions:
        return "it defines a function"
    if not line.commands:
        return "no command"
    for r in line.redirects:
        if r.target is None:
            return "a redirection whose target is not a literal"
        if r.writes and r.target not in QUIET_TARGETS:
            return f"a redirection writes to {r.target}"
        if r.target.startswith(("/dev/tcp/", "/dev/udp/")):
            return f"a redirection to {r.target} (the network)"
    for cmd in line.commands:
        if why := command_not_read_only(cmd):
            return why
    return None


def is_read_only(line: ParsedLine) -> bool:
    return not_read_only(line) is None


def reader_names() -> Sequence[str]:
    return sorted(READERS)
