"""The option tables of `cp`, `mv`, `install`, `ln`, `rsync` and `tar`, read from their own
`--help` text (kept verbatim beside this file: `<tool>.txt`, with where it came from).

An option line is one whose text starts with `-` (coreutils, tar: `  -t, --target-directory=
DIRECTORY  copy all SOURCE arguments into DIRECTORY`; rsync: `--rsh=COMMAND, -e  specify
the remote shell`): its names are the comma-separated words before the first run of two
spaces, each `-x`, `--name`, `--name=ARG` or `--name[=ARG]`; an argument written on one
name is the other names' too (getopt's convention); the description is the rest of the
line and the indented lines after it. Nothing here imports the refused-command check: the
table is the manual's, and `roles` reads what an option does from its description alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent
TOOLS = ("cp", "mv", "install", "ln", "rsync", "tar")
_NAME = re.compile(r"^(--?[A-Za-z0-9@?][-A-Za-z0-9]*)(\[?=([^\]\s]+)\]?)?$")


@dataclass(frozen=True)
class Option:
    names: tuple[str, ...]  # `-t`, `--target-directory`
    arg: str | None  # DIRECTORY, or None
    optional: bool  # `--backup[=CONTROL]`
    text: str  # the description

    @property
    def short(self) -> str | None:
        return next((n for n in self.names if len(n) == 2 and n[1] != "-"), None)

    @property
    def long(self) -> str | None:
        return next((n for n in self.names if n.startswith("--")), None)


def _names(spec: str) -> tuple[list[str], str | None, bool] | None:
    names: list[str] = []
    arg, optional = None, False
    for word in (w.strip() for w in spec.split(",")):
        word = word.removesuffix(" (*)")
        if not word:
            continue
        m = _NAME.match(word)
        if m is None:
            return None
        names.append(m.group(1))
        if m.group(3):
            arg, optional = m.group(3), m.group(2).startswith("[")
    return (names, arg, optional) if names else None


def options(tool: str) -> list[Option]:
    """The tool's options in the order its manual lists them."""
    lines = (HERE / f"{tool}.txt").read_text().splitlines()
    out: list[Option] = []
    current: tuple[list[str], str | None, bool] | None = None
    text: list[str] = []

    def close() -> None:
        if current is not None:
            out.append(Option(tuple(current[0]), current[1], current[2], " ".join(text).strip()))

    for line in lines:
        if line.startswith("#"):
            continue
        stripped = line.strip()
        if stripped.startswith("-") and not stripped.startswith("---"):
            spec, rest = [*re.split(r"\s{2,}", stripped, maxsplit=1), ""][:2]
            parsed = _names(spec)
            if parsed is not None:
                close()
                current, text = parsed, [rest.strip()]
                continue
        if current is not None and line.startswith(" ") and stripped:
            text.append(stripped)
        elif not stripped:
            close()
            current, text = None, []
    close()
    return _merge(out)


def _merge(found: list[Option]) -> list[Option]:
    """One entry per option (tar lists `-F, --info-script=NAME, --new-volume-script=NAME`
    on one line; rsync lists `-h` twice): the first wins."""
    seen: set[str] = set()
    out = []
    for o in found:
        if any(n in seen for n in o.names):
            continue
        seen.update(o.names)
        out.append(o)
    return out


# What an option does to the write, read from its description (the manual's words).
ROLE_WORDS: list[tuple[str, str]] = [
    (
        "no_write",
        r"display this help|output version|print (the )?program version|show this help|"
        r"give this help|print the version|give a short usage|trial run|list the files instead|"
        r"list the contents|find differences|test the archive volume|don't copy the file data|show tar defaults",
    ),
    ("target_dir", r"into DIRECTORY|the DIRECTORY in which to create"),
    ("flat", r"treat (DEST|LINK_NAME) as a normal file( always)?$"),
    (
        "no_clobber",
        r"do not overwrite|never overwrite|prompt before overwrite|prompt whether to remove|"
        r"skip updating files that exist|don't replace existing files",
    ),
    ("backup", r"make a backup|like --backup|make backups|backup before removal"),
    ("replace", r"remove existing destination files|remove each existing destination file"),
    ("existing_only", r"skip creating new files on receiver"),
    ("link_copy", r"hard link files instead of copying|make symbolic links instead of copying"),
    ("make_dirs", r"treat all arguments as directory names"),
    ("dir_out", r"backups into hierarchy|partially transferred file into DIR|temporary files in directory"),
    ("log_out", r"log what we're doing to the specified FILE|send verbose output to FILE"),
    ("file_out", r"write a batched update"),
    ("no_dest", r"w/o updating dest"),
    (
        "deletes",
        r"delete extraneous|receiver deletes|find deletions|also delete excluded|"
        r"delete missing source arguments|an alias for --delete-during",
    ),
    ("extract", r"^extract files from an archive"),
    ("create", r"^create a new archive"),
    ("append_mode", r"^append files to the end|^only append files newer|^append tar files"),
    ("chdir", r"^change to directory DIR"),
    ("archive", r"use archive file or device ARCHIVE"),
    ("stdout", r"extract files to standard output|pipe extracted files to another program"),
    ("absolute", r"don't strip leading '/'s"),
    ("one_top", r"create a subdirectory to avoid having loose files"),
    ("strip", r"strip NUMBER leading components"),
    ("other_operation", r"^delete from the archive"),
    # what the corpus does not model (the line is left out, and counted as left out)
    (
        "unmodelled",
        r"filter (the archive )?through|implies -M|volume name|begin at member|only store files newer|"
        r"compare date and time|NUMBERth occurrence|get names to extract|read list of source-file names|"
        r"read a batched update|refuse operator paths|SELinux|multi-volume|change tape|use archive suffix",
    ),
]


def roles(option: Option) -> set[str]:
    return {role for role, words in ROLE_WORDS if re.search(words, option.text)}
