"""Where a file tool writes, read from its options as the tool's own parser reads them.

One table, `GRAMMARS`, holds each tool's option grammar as its manual gives it (GNU
coreutils 9.1 `cp`, `mv`, `install`, `ln`, `tee`, with the options later versions added;
GNU tar 1.34; rsync 3.x; GNU cpio 2.13; Info-ZIP unzip 6.0): the short letters and long
names that take a value (and the long ones whose `=value` is optional), and the role of
each option in the write: the target folder (`-t`), "the destination is a file" (`-T`),
"an existing file is kept" (`-n`, a backup), "nothing is written" (`--help`, a dry run),
extract or create (tar, cpio), the folder it works in (`-C`, `-D`, `-d`), a file it writes
besides (`--log-file`, `--backup-dir`). `writes(words)` parses a command with that grammar
(getopt_long's rules: bundled short options, `-tDIR` and `-t DIR`, `--name=VALUE` and
`--name VALUE`, a unique abbreviation of a long name, options after operands, `--`; tar's
old-style first word, unzip's own syntax) and says what it writes: `Write`s, which the
refused-command check judges (`safetypaths.judge_write`). A tool or an option is a row
here, not code in the check; the forms the table reads are in docs/security.md ("The
threat model for `!`").
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["file", "into", "tree"]


@dataclass(frozen=True)
class Write:
    """One place a command writes. `file`: this file (its content lost when `replaces`);
    `into`: a copy's destination, a folder when it is one (then `folder/basename(source)`
    for each of `sources`) or else the file itself; `tree`: a folder that receives names
    not known before the tool runs (an archive's members, a folder's contents)."""

    word: str | None  # as written; None: not a literal
    kind: Kind = "file"
    replaces: bool = False
    sources: tuple[str | None, ...] = ()
    only_new: bool = False  # an existing file is left as it is (`-n`, `-i`, `ln` without -f)
    only_existing: bool = False  # no file is made, existing ones updated (`rsync --existing`)
    folder: bool = False  # `into` is a folder whatever is on disk (-t, several sources)
    link: bool = False  # the name is made as a link (a link already there is replaced, not followed)


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


@dataclass(frozen=True)
class Grammar:
    shape: Literal["copy", "link", "rsync", "tar", "cpio", "unzip", "tee"]
    short_value: str = ""  # short options that take a value
    long_value: frozenset[str] = frozenset()  # long options that take a value
    long_optional: frozenset[str] = frozenset()  # long options whose `=value` is optional
    long_flags: frozenset[str] = frozenset()  # the others (known, for abbreviations)
    roles: Mapping[str, str] = field(default_factory=dict)  # letter, long name or `name=value` -> role


def _roles(**by_role: str) -> dict[str, str]:
    return {name: role for role, names in by_role.items() for name in names.split()}


_COPY_FLAGS = "force interactive no-clobber no-target-directory strip-trailing-slashes update verbose help version"
GRAMMARS: dict[str, Grammar] = {
    # coreutils 9.1 `cp --help` (and `--update[=UPDATE]`, `--debug` of 9.3+)
    "cp": Grammar(
        "copy",
        short_value="St",
        long_value=_set("suffix target-directory no-preserve sparse"),
        long_optional=_set("backup context preserve reflink update"),
        long_flags=_set(
            _COPY_FLAGS + " archive attributes-only copy-contents link dereference no-dereference parents "
            "recursive remove-destination symbolic-link one-file-system debug keep-directory-symlink"
        ),
        roles=_roles(
            target_dir="t target-directory",
            flat="T no-target-directory",
            no_clobber="n no-clobber i interactive update=none update=none-fail",
            backup="b backup",
            link_copy="l link s symbolic-link",
            replace="f force remove-destination",
            no_write="help version attributes-only",
        ),
    ),
    # `mv --help`
    "mv": Grammar(
        "copy",
        short_value="St",
        long_value=_set("suffix target-directory"),
        long_optional=_set("backup update"),
        long_flags=_set(_COPY_FLAGS + " context debug exchange no-copy"),
        roles=_roles(
            target_dir="t target-directory",
            flat="T no-target-directory",
            no_clobber="n no-clobber i interactive update=none update=none-fail",
            backup="b backup",
            no_write="help version",
        ),
    ),
    # `install --help`: `-d` makes the operands as folders
    "install": Grammar(
        "copy",
        short_value="gmoSt",
        long_value=_set("group mode owner suffix target-directory strip-program"),
        long_optional=_set("backup context"),
        long_flags=_set(
            "compare directory preserve-timestamps strip no-target-directory verbose preserve-context debug "
            "help version"
        ),
        roles=_roles(
            target_dir="t target-directory",
            flat="T no-target-directory",
            backup="b backup",
            make_dirs="d directory",
            no_write="help version",
        ),
    ),
    # `ln --help`: an existing name is replaced only with -f (here -n is --no-dereference)
    "ln": Grammar(
        "link",
        short_value="St",
        long_value=_set("suffix target-directory"),
        long_optional=_set("backup"),
        long_flags=_set(
            "directory force interactive logical no-dereference physical relative symbolic "
            "no-target-directory verbose help version"
        ),
        roles=_roles(
            target_dir="t target-directory",
            flat="T no-target-directory",
            replace="f force",
            backup="b backup",
            no_clobber="i interactive",
            no_write="help version",
        ),
    ),
    # `tee --help`
    "tee": Grammar(
        "tee",
        long_optional=_set("output-error"),
        long_flags=_set("append ignore-interrupts help version"),
        roles=_roles(append="a append", no_write="help version"),
    ),
    # rsync 3.x `rsync --help`: the last operand is the destination (`host:path` is remote)
    "rsync": Grammar(
        "rsync",
        short_value="BefMT@",
        long_value=_set(
            "info debug stderr backup-dir suffix chmod block-size rsh rsync-path max-delete max-size min-size "
            "max-alloc partial-dir usermap groupmap chown timeout contimeout modify-window temp-dir "
            "compare-dest copy-dest link-dest compress-choice compress-level compress-threads skip-compress "
            "filter exclude exclude-from include include-from files-from copy-as address port sockopts outbuf "
            "remote-option out-format log-file log-file-format password-file early-input bwlimit stop-after "
            "stop-at write-batch only-write-batch read-batch protocol iconv checksum-seed checksum-choice "
            "confine-root"
        ),
        long_flags=_set(
            "verbose quiet no-motd checksum archive recursive inc-recursive no-inc-recursive relative "
            "no-implied-dirs backup update inplace append append-verify dirs old-dirs mkpath links copy-links "
            "copy-unsafe-links safe-links insecure-links munge-links copy-dirlinks keep-dirlinks hard-links perms "
            "executability acls xattrs owner group devices copy-devices write-devices specials drop-D times "
            "atimes open-noatime crtimes omit-dir-times omit-link-times super fake-super sparse preallocate "
            "dry-run whole-file no-whole-file one-file-system existing ignore-non-existing ignore-existing "
            "remove-source-files del delete delete-before delete-during delete-delay delete-after "
            "delete-excluded ignore-missing-args delete-missing-args ignore-errors force partial delay-updates "
            "prune-empty-dirs numeric-ids ignore-times size-only fuzzy compress cvs-exclude from0 old-args "
            "secluded-args trust-sender blocking-io stats 8-bit-output human-readable progress itemize-changes "
            "list-only fsync ipv4 ipv6 version help daemon"
        ),
        roles=_roles(
            backup="b backup backup-dir",
            no_clobber="ignore-existing",
            existing_only="existing ignore-non-existing",
            deletes="del delete delete-before delete-during delete-delay delete-after delete-excluded "
            "delete-missing-args",
            no_write="n dry-run list-only help version V",
            log_out="log-file",
            file_out="write-batch",
            no_dest="only-write-batch",  # the batch file only: the destination is left as it is
            dir_out="backup-dir partial-dir T temp-dir",
        ),
    ),
    # GNU tar 1.34 `tar --help`: the operation, then where (-C) and what else it writes
    "tar": Grammar(
        "tar",
        short_value="bCfFgHIKLNTVX",
        long_value=_set(
            "listed-incremental hole-detection level sparse-version add-file directory exclude exclude-ignore "
            "exclude-ignore-recursive exclude-tag exclude-tag-all exclude-tag-under files-from exclude-from "
            "to-command group group-map mode mtime owner owner-map sort xattrs-exclude xattrs-include file "
            "info-script new-volume-script tape-length rmt-command rsh-command volno-file blocking-factor "
            "record-size format pax-option label use-compress-program starting-file newer-mtime newer "
            "after-date suffix strip-components transform xform checkpoint-action index-file no-quote-chars "
            "quote-chars quoting-style"
        ),
        long_optional=_set("occurrence one-top-level atime-preserve backup checkpoint"),
        long_flags=_set(
            "catenate concatenate create delete diff compare append test-label list update extract get "
            "check-device incremental ignore-failed-read no-check-device no-seek seek sparse exclude-backups "
            "exclude-caches exclude-caches-all exclude-caches-under exclude-vcs exclude-vcs-ignores no-null "
            "no-recursion no-unquote no-verbatim-files-from null recursion unquote verbatim-files-from anchored "
            "ignore-case no-anchored no-ignore-case no-wildcards no-wildcards-match-slash wildcards "
            "wildcards-match-slash keep-directory-symlink keep-newer-files keep-old-files no-overwrite-dir "
            "overwrite overwrite-dir recursive-unlink remove-files skip-old-files unlink-first verify "
            "ignore-command-error no-ignore-command-error to-stdout clamp-mtime delay-directory-restore touch "
            "no-delay-directory-restore no-same-owner no-same-permissions numeric-owner preserve-permissions "
            "same-permissions same-owner preserve-order same-order acls no-acls no-selinux no-xattrs selinux "
            "xattrs force-local multi-volume read-full-records ignore-zeros old-archive portability posix "
            "auto-compress bzip2 xz lzip lzma lzop no-auto-compress zstd gzip gunzip ungzip compress uncompress "
            "hard-dereference dereference one-file-system absolute-names full-time check-links block-number "
            "show-defaults show-omitted-dirs show-snapshot-field-ranges show-transformed-names "
            "show-stored-names totals utc verbose warning interactive confirmation help usage version"
        ),
        roles=_roles(
            extract="x extract get",
            create="c create",
            append="r append u update A catenate concatenate",
            no_write="t list d diff compare test-label ? help usage version show-defaults",
            chdir="C directory",
            archive="f file",
            stdout="O to-stdout to-command",
            absolute="P absolute-names",
            file_out="g listed-incremental index-file volno-file",
            one_top="one-top-level",
            backup="backup suffix",
        ),
    ),
    # GNU cpio 2.13 `cpio --help`: -i extracts, -p copies into a folder, -o writes an archive
    "cpio": Grammar(
        "cpio",
        short_value="CDEFHIMORW",
        long_value=_set("block-size io-size directory format owner warning file message rsh-command pattern-file"),
        long_flags=_set(
            "extract create pass-through list force-local quiet verbose dot swap nonmatching numeric-uid-gid "
            "rename swap-bytes swap-halfwords to-stdout only-verify-crc append device-independent reproducible "
            "ignore-devno renumber-inodes link absolute-filenames no-absolute-filenames null reset-access-time "
            "dereference make-directories preserve-modification-time no-preserve-owner sparse unconditional "
            "help usage version"
        ),
        roles=_roles(
            extract="i extract",
            pass_through="p pass-through",
            create="o create",
            no_write="t list help usage version",
            chdir="D directory",
            archive="O F file",
            stdout="to-stdout",
            absolute="absolute-filenames",
        ),
    ),
    # Info-ZIP unzip 6.0 `unzip -h`: `unzip [-opts] file[.zip] [list] [-x xlist] [-d exdir]`
    "unzip": Grammar(
        "unzip",
        short_value="d",
        roles=_roles(no_write="l t v z Z p c f T h", chdir="d"),
    ),
}


@dataclass
class Parsed:
    options: list[tuple[str, str | None]]  # (letter or long name, value)
    operands: list[str | None]

    def role(self, grammar: Grammar, role: str) -> list[str | None]:
        """The values of the options with `role` (an option without a value gives "")."""
        out: list[str | None] = []
        for name, value in self.options:
            if grammar.roles.get(name) == role or grammar.roles.get(f"{name}={value}") == role:
                out.append(value if value is not None else "")
        return out

    def has(self, grammar: Grammar, role: str) -> bool:
        return bool(self.role(grammar, role))


def _long(grammar: Grammar, text: str) -> tuple[str, bool]:
    """(the long option `text` names, whether it takes a value): an exact name, or the one
    name it abbreviates (getopt_long); an unknown one is kept as written."""
    known = grammar.long_value | grammar.long_optional | grammar.long_flags
    if text in known:
        return text, text in grammar.long_value
    matches = [n for n in known if n.startswith(text)]
    if len(matches) == 1:
        return matches[0], matches[0] in grammar.long_value
    return text, False


def _literal(value: str) -> str:
    """A value glued to its option (`--dir=~/x`, `-t~/x`): bash expands no `~` there, so
    it names a folder called `~` in the cwd."""
    return "./" + value if value.startswith("~") else value


def parse(grammar: Grammar, args: list[str | None], *, old_style: bool = False) -> Parsed:
    """`args` read as getopt_long reads them (options anywhere until `--`). `old_style`:
    tar's first word may be a bundle without a dash whose letters take the next words."""
    out = Parsed([], [])
    i = 0
    if old_style and args and args[0] is not None and not args[0].startswith("-"):
        bundle, i = args[0], 1
        for letter in bundle:
            value = None
            if letter in grammar.short_value and i < len(args):
                value, i = args[i], i + 1
            out.options.append((letter, value))
    while i < len(args):
        word = args[i]
        i += 1
        if word is None or word == "-" or not word.startswith("-"):
            out.operands.append(word)
        elif word == "--":
            out.operands.extend(args[i:])
            break
        elif word.startswith("--"):
            text, eq, attached = word[2:].partition("=")
            name, takes = _long(grammar, text)
            if eq:
                out.options.append((name, _literal(attached)))
            elif takes and i < len(args):
                out.options.append((name, args[i]))
                i += 1
            else:
                out.options.append((name, None))
        else:
            for k, letter in enumerate(word[1:], start=1):
                if letter in grammar.short_value:
                    rest = word[k + 1 :]
                    if rest:
                        out.options.append((letter, _literal(rest)))
                    elif i < len(args):
                        out.options.append((letter, args[i]))
                        i += 1
                    else:
                        out.options.append((letter, None))
                    break
                out.options.append((letter, None))
    return out


def _copy(g: Grammar, p: Parsed, link: bool) -> list[Write]:
    """cp, mv, install, ln: the destination `-t` names, or the last operand (`-T`: a file;
    else a folder when it is one). Whether an existing file there is replaced: `-n`/`-i`
    keep it, and so do `ln` and `cp -l`/`-s` without `-f` or a backup (they fail on it)."""
    if p.has(g, "no_write"):
        return []
    forced = p.has(g, "replace")
    backup = p.has(g, "backup")
    only_new = p.has(g, "no_clobber") or ((link or p.has(g, "link_copy")) and not (forced or backup))
    replaces = not backup and not only_new
    ops = p.operands
    if p.has(g, "make_dirs"):
        return [Write(w) for w in ops]

    def write(word: str | None, kind: Kind, sources: list[str | None], folder: bool = False) -> Write:
        return Write(word, kind, replaces, tuple(sources), only_new, folder=folder, link=link)

    dirs = p.role(g, "target_dir")
    if dirs:
        return [write(dirs[-1], "into", ops, folder=True)]
    if p.has(g, "flat") and len(ops) >= 2:
        return [write(ops[-1], "file", ops[:-1])]
    if link and len(ops) == 1:  # `ln -s TARGET`: the link is made in the cwd
        return [write(".", "into", ops, folder=True)]
    if len(ops) >= 2:
        return [write(ops[-1], "into", ops[:-1], folder=len(ops) > 2)]
    return []


def _remote(word: str | None) -> bool:
    if word is None:
        return False
    head = word.split("/", 1)[0]
    return word.startswith("rsync://") or (":" in head and not word.startswith(("./", "/")))


def _rsync(g: Grammar, p: Parsed) -> list[Write]:
    if p.has(g, "no_write"):
        return []
    out = [Write(w) for w in p.role(g, "log_out") if w]
    out += [Write(w, "file", True) for w in p.role(g, "file_out") + p.role(g, "no_dest") if w]
    out += [Write(w, "tree") for w in p.role(g, "dir_out") if w]
    ops = p.operands
    if len(ops) < 2 or _remote(ops[-1]) or p.has(g, "no_dest"):
        return out
    only_new, only_existing = p.has(g, "no_clobber"), p.has(g, "existing_only")
    replaces = not p.has(g, "backup") and not only_new
    dest, sources = ops[-1], ops[:-1]
    named = tuple(s for s in sources if s is not None and not s.endswith("/"))
    if len(named) < len(sources):  # `src/`: its contents, names not known here
        out.append(Write(dest, "tree", replaces))
    if named:
        folder = len(sources) > 1 or (dest or "").endswith("/")
        out.append(Write(dest, "into", replaces, named, only_new, only_existing, folder=folder))
    return out


def deletes_in(args: list[str | None]) -> list[str | None]:
    """Where `rsync --delete…` deletes: the local destination (none for a remote one)."""
    g = GRAMMARS["rsync"]
    p = parse(g, args)
    if not p.has(g, "deletes") or len(p.operands) < 2 or _remote(p.operands[-1]):
        return []
    return p.operands[-1:]


def _archive(g: Grammar, p: Parsed, extract: bool, into: list[str | None]) -> list[Write]:
    """tar and cpio: an extraction puts unknown names into each folder it works in (the
    cwd when none is named); `-P` anywhere; creating writes the archive file."""
    out = [Write(w) for w in p.role(g, "file_out") if w]
    if extract and not p.has(g, "stdout"):
        if p.has(g, "absolute"):
            return [*out, Write("/", "tree", True)]
        top = [t or "archive" for t in p.role(g, "one_top")][-1:]  # tar --one-top-level[=DIR]
        out += [Write(d if not top or d is None else os.path.join(d, top[0]), "tree", True) for d in (into or ["."])]
    elif not extract:  # `-c` makes the archive anew; `-r`, `-u`, `-A` append to it
        fresh = p.has(g, "create") and not p.has(g, "backup")  # `--backup`: the old archive is kept
        out += [Write(a, "file", fresh) for a in p.role(g, "archive") if a not in (None, "", "-")]
    return out


def _tar(g: Grammar, args: list[str | None]) -> list[Write]:
    p = parse(g, args, old_style=True)
    if p.has(g, "no_write"):
        return []
    if p.has(g, "extract"):
        return _archive(g, p, True, p.role(g, "chdir"))
    if p.has(g, "create") or p.has(g, "append"):
        return _archive(g, p, False, [])
    return []


def _cpio(g: Grammar, args: list[str | None]) -> list[Write]:
    p = parse(g, args)
    if p.has(g, "no_write"):
        return []
    if p.has(g, "pass_through"):
        return [Write(d, "tree", True) for d in p.operands[-1:]]
    if p.has(g, "extract"):
        return _archive(g, p, True, p.role(g, "chdir"))
    if p.has(g, "create"):
        return _archive(g, p, False, [])
    return []


def _unzip(g: Grammar, args: list[str | None]) -> list[Write]:
    """unzip's own syntax: option bundles anywhere, `-d EXDIR` (or `-dEXDIR`), `-x` starts
    the list of names to leave out (until the next option)."""
    options: list[tuple[str, str | None]] = []
    operands: list[str | None] = []
    excluding = False
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word is not None and word.startswith("-") and len(word) > 1:
            excluding = False
            for k, letter in enumerate(word[1:], start=1):
                if letter == "x":
                    excluding = True
                elif letter in g.short_value:
                    value = _literal(word[k + 1 :]) if word[k + 1 :] else (args[i] if i < len(args) else None)
                    i += 0 if word[k + 1 :] else 1
                    options.append((letter, value))
                    break
                else:
                    options.append((letter, None))
        elif not excluding:
            operands.append(word)
    p = Parsed(options, operands)
    if p.has(g, "no_write") or not operands:
        return []
    return [Write(d, "tree", True) for d in (p.role(g, "chdir")[-1:] or ["."])]


def _tee(g: Grammar, p: Parsed) -> list[Write]:
    if p.has(g, "no_write"):
        return []
    return [Write(w, "file", not p.has(g, "append")) for w in p.operands if w != "-"]


def writes(program: str, args: list[str | None]) -> list[Write] | None:
    """What `program ARGS` writes, by its grammar; None for a program the table does not
    hold (so the caller can tell "writes nothing" from "not known here")."""
    grammar = GRAMMARS.get(os.path.basename(program))
    if grammar is None:
        return None
    match grammar.shape:
        case "copy" | "link":
            return _copy(grammar, parse(grammar, args), grammar.shape == "link")
        case "rsync":
            return _rsync(grammar, parse(grammar, args))
        case "tar":
            return _tar(grammar, args)
        case "cpio":
            return _cpio(grammar, args)
        case "unzip":
            return _unzip(grammar, args)
        case "tee":
            return _tee(grammar, parse(grammar, args))
    return None
