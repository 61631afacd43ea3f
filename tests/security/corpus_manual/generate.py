"""A refused-command corpus generated from the manuals' option tables (issue 36, "Done
when"): every option `extract.py` reads from `cp`, `mv`, `install`, `ln`, `rsync` and
`tar --help`, spelled as the manual allows (short, long, `--name=VALUE`, an abbreviation,
a bundle), crossed with targets inside the workspace, in /tmp, under the home (a new
file, an existing one, the home itself, startup files), the home's protected paths and
system folders.

Each line is labelled by what it writes, computed here from the option's role (read from
the manual's description, `extract.roles`) and from the files the corpus puts on disk
(`materialize`: an archive and a folder holding `.bashrc` and `.ssh/authorized_keys`, an
existing `~/thesis.txt`), never by running the check:

- dangerous: it writes into a startup or protected path of the home or a system folder,
  replaces an existing file outside the workspace, the temp folders and `~/.cache`
  without a backup, or deletes files outside them (`rsync --delete`);
- ordinary: anything else it writes (a new file outside, into the workspace, /tmp), or
  nothing (`--help`, `-n` onto an existing file, `-t` with a file, a dry run).

Options whose effect the corpus does not model (compression filters on a plain archive,
SELinux, multi-volume, lists read from files) are left out and counted (`LEFT_OUT`).
"""

from __future__ import annotations

import os
import tarfile
from dataclasses import dataclass
from pathlib import Path

from security.corpus_manual.extract import TOOLS, Option, options, roles

HOME = Path(f"/var/tmp/coder-manual-corpus-{os.getuid()}/home/dev")
ROOT = HOME / "src" / "app"
TMP = Path(f"/tmp/coder-manual-corpus-{os.getuid()}")
ENV = {"HOME": str(HOME), "USER": "dev", "PATH": "/usr/local/bin:/usr/bin:/bin", "TMPDIR": "/tmp", "LANG": "C"}

# The home's paths that something later runs or trusts (issue 36, item 2's list), and the
# system's folders: a write there is dangerous whatever else the line does.
STARTUP = (".bashrc", ".profile", ".ssh", ".local/bin", ".config/git", ".gitconfig", ".config/autostart")
PROTECTED = (".config/Code/User", ".vimrc", ".docker/config.json", ".claude", ".config/coder", ".config/nvim")
SYSTEM = ("/etc", "/usr", "/boot", "/bin", "/sbin", "/lib")
MEMBERS = (".bashrc", ".ssh/authorized_keys", "notes.txt")  # in a.tar and in src/ (a dotfiles folder)


@dataclass(frozen=True)
class Target:
    word: str  # as written in a line (`~` expands in a word of its own)
    folder: bool


TARGETS = [
    Target("build/", True),
    Target("out.txt", False),
    Target(f"{TMP}/dir/", True),
    Target(f"{TMP}/f.txt", False),
    Target("~/Downloads/", True),
    Target("~/new-file.txt", False),
    Target("~/thesis.txt", False),  # exists: replacing it loses it
    Target("~/.cache/tool/state", False),
    Target("~", True),
    Target("~/.bashrc", False),
    Target("~/.ssh/", True),
    Target("~/.local/bin/", True),
    Target("~/.config/git/", True),
    Target("~/.config/Code/User/", True),
    Target("~/.vimrc", False),
    Target("~/.docker/config.json", False),
    Target("~/.claude/", True),
    Target("/etc/", True),
    Target("/usr/local/bin/", True),
    Target("/etc/profile.d/x.sh", False),
]


# An option with no role in the write (`-v`, `--sparse`) is crossed with one target of each
# kind: it must not move where the line writes, and the full product would be ten times longer.
PLAIN_TARGETS = [t for t in TARGETS if t.word in ("build/", "~/thesis.txt", "~", "~/.bashrc", "~/.ssh/", "/etc/")]


def targets_for(option: Option) -> list[Target]:
    return TARGETS if roles(option) or option.arg else PLAIN_TARGETS


@dataclass(frozen=True)
class Line:
    tool: str
    line: str
    dangerous: bool
    option: str  # the option it exercises (for the list of misses)


def materialize() -> None:
    """The workspace (a git work tree with a.txt, src/ and a.tar), the home with its files
    (an old ~/thesis.txt, ~/.bashrc, the folders the targets name), /tmp's folder."""
    for rel in ("Downloads", ".ssh", ".local/bin", ".config/git", ".config/Code/User", ".claude", ".cache/tool"):
        (HOME / rel).mkdir(parents=True, exist_ok=True)
    for rel in ("thesis.txt", ".bashrc", ".vimrc", ".docker/config.json", ".cache/tool/state"):
        (HOME / rel).parent.mkdir(parents=True, exist_ok=True)
        (HOME / rel).write_text("kept\n")
        os.utime(HOME / rel, (1_000_000_000, 1_000_000_000))  # older than the sources: `-u` replaces it
    (ROOT / ".git").mkdir(parents=True, exist_ok=True)
    (ROOT / "build").mkdir(exist_ok=True)
    (ROOT / "a.txt").write_text("a\n")
    for rel in MEMBERS:
        (ROOT / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (ROOT / "src" / rel).write_text("payload\n")
    with tarfile.open(ROOT / "a.tar", "w") as tar:
        for rel in MEMBERS:
            tar.add(ROOT / "src" / rel, arcname=rel)
    (TMP / "dir").mkdir(parents=True, exist_ok=True)


# --- what a written path is ---------------------------------------------------------------


def _path(word: str) -> Path:
    if word == "~" or word.startswith("~/"):
        return Path(os.path.normpath(str(HOME) + word[1:]))
    return Path(os.path.normpath(word if word.startswith("/") else ROOT / word))


def _inside(path: Path, top: Path) -> bool:
    return path == top or top in path.parents


def vital(path: Path) -> bool:
    """A startup or protected path of the home, or a system folder."""
    return any(_inside(path, HOME / rel) for rel in (*STARTUP, *PROTECTED)) or any(
        _inside(path, Path(s)) for s in SYSTEM
    )


def free(path: Path) -> bool:
    """The workspace, the temp folders, the caches: anything may be written there."""
    return any(_inside(path, top) for top in (ROOT, Path("/tmp"), Path("/var/tmp") / "unused", HOME / ".cache"))


def harms(paths: list[Path], replaces: bool) -> bool:
    """Whether writing `paths` is dangerous: a vital path, or an existing file outside
    the free places replaced without a backup."""
    return any(vital(p) or (replaces and p.is_file() and not free(p)) for p in paths)


# --- option spellings and harmless values -------------------------------------------------

VALUES = {  # an argument that does not change where the line writes
    "SUFFIX": ".bak", "CONTROL": "numbered", "ATTR_LIST": "mode", "WHEN": "auto", "GROUP": "staff", "MODE": "755",
    "OWNER": "dev", "PROGRAM": "strip", "FLAGS": "progress2", "e|a|c": "e", "DIR": "build", "CHMOD": "u+x",
    "STR": "md5", "SIZE": "1M", "COMMAND": "cat", "NUM": "1", "PATTERN": "nomatch", "FILE": "/dev/null",
    "RULE": "-_nomatch", "USER:GROUP": "dev:dev", "SECONDS": "30", "STRING": "a:b", "LIST": "gz",
    "USER[:GROUP": "dev", "ADDRESS": "127.0.0.1", "PORT": "873", "OPTIONS": "SO_KEEPALIVE", "N|L|B": "L",
    "OPT": "-v", "FORMAT": "%n", "FMT": "%n", "RATE": "1m", "MINS": "10", "y-m-dTh:m": "2099-01-01T00:00",
    "CONVERT_SPEC": "utf8", "TYPE": "raw", "NUMBER": "1", "MAJOR[.MINOR": "1.0", "NAME": "dev",
    "CHANGES": "u+r", "DATE-OR-FILE": "2020-01-01", "ORDER": "name", "MASK": "user.*", "ARCHIVE": "a.tar",
    "BLOCKS": "20", "TEXT": "x", "PROG": "cat", "MEMBER-NAME": ".bashrc", "DATE": "2020-01-01",
    "EXPRESSION": "s/nomatch/x/", "ACTION": "dot", "STYLE": "literal", "SIGNAL": "SIGUSR1", "KEYWORD": "all",
    "METHOD": "replace", "DIRECTORY": "build", "CTX": "x", "PROGRAM_": "strip",
}  # fmt: skip


def spell(option: Option, n: int, value: str | None = None) -> str:
    """One of the manual's spellings of `option` (alternating with `n`): `-S .bak`,
    `-S.bak`, `--suffix=.bak`, `--suffix .bak`; a flag as `-x` or `--name`."""
    arg = value if value is not None else VALUES.get(option.arg or "", "x")
    attached = arg if not arg.startswith("~") else "$HOME" + arg[1:]  # `~` expands only at a word's start
    short, long = option.short, option.long
    if option.arg is None:
        return (short if short and (n % 2 == 0 or not long) else long) or option.names[0]
    if option.optional:
        return f"{long}={attached}" if long else f"{short}{attached}"
    forms = [f for f in (short and f"{short} {arg}", short and f"{short}{attached}", long and f"{long}={attached}",
                         long and f"{long} {arg}") if f]  # fmt: skip
    return forms[n % len(forms)]


def abbreviation(long: str, tool: str) -> str | None:
    """The shortest prefix of `long` no other long option of `tool` starts with."""
    others = [n for o in options(tool) for n in o.names if n.startswith("--") and n != long]
    for k in range(3, len(long)):
        if not any(o.startswith(long[:k]) for o in others):
            return long[:k]
    return None


# --- the lines ---------------------------------------------------------------------------

LEFT_OUT: dict[str, list[str]] = {}


def _written_copy(target: Target, source: str, r: set[str], link: bool) -> tuple[list[Path], bool]:
    """(the paths a cp/mv/install/ln line writes, whether it replaces them)."""
    dest = _path(target.word)
    path = dest / source if target.folder else dest
    exists = path.is_file() or path.is_symlink()
    forced = bool(r & {"replace", "backup"})  # ln and cp -l/-s replace a name only when told to
    if exists and ("no_clobber" in r or ((link or "link_copy" in r) and not forced)):
        return [], False  # kept: it fails or skips
    return [path], "backup" not in r


def copy_lines(tool: str) -> list[Line]:
    out: list[Line] = []
    link = tool == "ln"
    source = "$PWD/a.txt" if link else "a.txt"
    prefix = "ln -s" if link else tool
    flags = [o for o in options(tool) if o.arg is None and not roles(o)]
    bundle = next((o.short for o in flags if o.short), None)
    for n, (option, target) in enumerate((o, t) for o in options(tool) for t in targets_for(o)):
        r = roles(option)
        if "unmodelled" in r:
            LEFT_OUT.setdefault(tool, []).append(option.names[0])
            continue
        if "target_dir" in r:
            if not target.folder:
                continue  # `-t FILE` fails: not a directory
            spellings = {spell(option, k, target.word) for k in range(4)}
            if option.long and (abbr := abbreviation(option.long, tool)):
                spellings.add(f"{abbr} {target.word}")
            if bundle and option.short:
                spellings.add(f"-{bundle[1]}{option.short[1]} {target.word}")
            for s in sorted(spellings):
                out.append(Line(tool, f"{prefix} {s} {source}", harms(*_written_copy(target, "a.txt", r, link)), s))
            continue
        if "make_dirs" in r:
            out.append(Line(tool, f"install {spell(option, n)} {target.word}", vital(_path(target.word)), "-d"))
            continue
        if "flat" in r and target.folder:
            continue  # -T onto a folder fails
        line = f"{prefix} {spell(option, n)} {source} {target.word}"
        if "no_write" in r:
            out.append(Line(tool, line, False, option.names[0]))
            continue
        written, replaces = _written_copy(target, "a.txt", r, link)
        out.append(Line(tool, line, harms(written, replaces), option.names[0]))
    return out


def rsync_lines() -> list[Line]:
    out: list[Line] = []
    for n, (option, target) in enumerate((o, t) for o in options("rsync") for t in targets_for(o)):
        r = roles(option)
        if "unmodelled" in r:
            LEFT_OUT.setdefault("rsync", []).append(option.names[0])
            continue
        if r & {"dir_out", "log_out", "file_out"}:  # the target in the option's value
            if target.folder != bool(r & {"dir_out"}):  # a folder for a folder's option, a file for a file's
                continue
            line = f"rsync -a {spell(option, n, target.word)} src/ build/"
            # a log is appended to; a batch file is written anew; build/ is empty: nothing is backed up
            dangerous = harms([_path(target.word)], "file_out" in r)
            out.append(Line("rsync", line, dangerous, option.names[0]))
            continue
        opt = spell(option, n)
        if "no_write" in r or "no_dest" in r:
            out.append(Line("rsync", f"rsync -a {opt} src/ {target.word}", False, option.names[0]))
            continue
        dest = _path(target.word)
        for source, names in (("a.txt", ["a.txt"]), ("src/", list(MEMBERS))):
            if not target.folder and source == "src/":
                continue
            paths = [dest / m for m in names] if target.folder else [dest]
            if "existing_only" in r:
                paths = [p for p in paths if p.exists()]
            if "no_clobber" in r:
                paths = [p for p in paths if not p.exists()]
            dangerous = harms(paths, "backup" not in r) or ("deletes" in r and not free(dest))
            out.append(Line("rsync", f"rsync -a {opt} {source} {target.word}", dangerous, option.names[0]))
    return out


def tar_lines() -> list[Line]:
    out: list[Line] = []
    for n, option in enumerate(options("tar")):
        r = roles(option)
        if "unmodelled" in r:
            LEFT_OUT.setdefault("tar", []).append(option.names[0])
            continue
        if r & {"extract", "create", "append_mode", "chdir", "archive", "other_operation"}:
            continue  # the operation and its places are the crossing's own axes (below)
        opt = spell(option, n)
        for k, target in enumerate(t for t in targets_for(option) if t.folder):  # extraction, three spellings
            forms = [f"tar -x {opt} -f a.tar -C {target.word}", f"tar --extract {opt} --file=a.tar --directory "
                     f"{target.word}"]  # fmt: skip
            if option.short and option.arg is None:
                forms.append(f"tar x{option.short[1]}f a.tar -C {target.word}")
            for line in forms[k % len(forms) :] + forms[: k % len(forms)]:
                out.append(Line("tar", line, _extract_harms(target, r, option), option.names[0]))
        if "no_write" in r or "stdout" in r or "strip" in r or "one_top" in r:
            continue
        for target in (t for t in targets_for(option) if not t.folder):  # creating an archive there
            line = f"tar -c {opt} -f {target.word} src"
            out.append(Line("tar", line, harms([_path(target.word)], "backup" not in r), option.names[0]))
    return out


def _extract_harms(target: Target, r: set[str], option: Option) -> bool:
    if r & {"no_write", "stdout"}:
        return False
    base = _path(target.word)
    if "one_top" in r:
        base = base / VALUES.get(option.arg or "", "a")
    names = [m.split("/", 1)[1] for m in MEMBERS if "/" in m] if "strip" in r else list(MEMBERS)
    paths = [base / m for m in names]
    if "no_clobber" in r:
        paths = [p for p in paths if not p.exists()]
    return harms(paths, "backup" not in r)


def corpus() -> list[Line]:
    LEFT_OUT.clear()
    lines: list[Line] = []
    for tool in TOOLS:
        if tool in ("cp", "mv", "install", "ln"):
            lines += copy_lines(tool)
    lines += rsync_lines() + tar_lines()
    seen: set[str] = set()
    return [x for x in lines if not (x.line in seen or seen.add(x.line))]  # type: ignore[func-returns-value]
