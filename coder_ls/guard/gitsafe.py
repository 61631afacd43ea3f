"""Git on a hostile repository: the flags that keep a repository's own config from running code.

A workspace is untrusted input, and so is its `.git/config` (and whatever it includes):
`core.fsmonitor` runs a command on `status`/`ls-files`, `core.hooksPath` and `.git/hooks`
run on commits and checkouts, a `filter.<driver>.clean|smudge|process` named from
`.gitattributes` runs on `status`, `checkout` and `add`, `diff.<driver>.textconv` and
`diff.external` run on `diff`, `core.pager` on any paged output. Every git call the server
makes goes through `gitops.run_git`, which puts `safe_flags(...)` first. Command-line `-c`
values are read last, so they win over the repository's, the user's, the system's and any
included file's.

Driver names are not known in advance: they are read with `git config --get-regexp`
(reading config runs nothing) and each one found is switched off. The answer is cached
against the config files it came from (and their includes), so the extra `git config`
runs only when one of them changed.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from coder_ls.saferead import read_text_or_none

# Always: no fsmonitor, no hooks, no external diff, no pager, no signature programs.
BASE_FLAGS: tuple[str, ...] = (
    "-c", "core.fsmonitor=false",
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.pager=cat",
    "-c", "diff.external=",
    "-c", "log.showSignature=false",
    "-c", "commit.gpgSign=false",
    "-c", "tag.gpgSign=false",
    "-c", "core.sshCommand=false",
    "-c", "protocol.ext.allow=never",
)  # fmt: skip

SCAN_REGEXP = r"^(filter|diff|include|includeif)\."

_Sig = tuple[tuple[str, int, int, int], ...]
_cache: dict[tuple[str, str], tuple[_Sig, tuple[str, ...]]] = {}


def _stat_sig(paths: list[str]) -> _Sig:
    out = []
    for p in sorted(set(paths)):
        try:
            st = os.stat(p)
            out.append((p, st.st_mtime_ns, st.st_size, st.st_ino))
        except OSError:
            out.append((p, 0, -1, 0))
    return tuple(out)


def _git_dirs(root: Path, env: Mapping[str, str]) -> list[Path]:
    """The git directories whose config applies (the common dir too, for worktrees)."""
    if env.get("GIT_DIR"):
        found = [Path(root, env["GIT_DIR"])]
    else:
        found = []
        for d in (root, *root.parents):
            dot = d / ".git"
            if dot.is_dir():
                found = [dot]
                break
            if dot.is_file():
                text = (read_text_or_none(dot, 4096) or "").strip()  # never a FIFO's open
                if text.startswith("gitdir:"):
                    found = [Path(d, text[7:].strip())]
                break
    for g in list(found):
        common = read_text_or_none(g / "commondir", 4096)
        if common is not None:
            found.append(Path(g, common.strip()))
    return found


def _config_files(root: Path, env: Mapping[str, str]) -> list[str]:
    home = os.path.expanduser("~")
    xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    files = [env.get("GIT_CONFIG_GLOBAL") or os.path.join(home, ".gitconfig"), os.path.join(xdg, "git", "config")]
    files.append(env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig")
    for g in _git_dirs(root, env):
        files += [str(g / "config"), str(g / "config.worktree"), str(g / "HEAD")]
    return files


def _parse(out: bytes) -> tuple[list[str], list[str], list[str]]:
    """(filter drivers, diff drivers, files to watch) from `--show-origin -z` output."""
    filters: set[str] = set()
    diffs: set[str] = set()
    watch: list[str] = []
    fields = out.split(b"\0")
    for i in range(0, len(fields) - 1, 2):
        origin = os.fsdecode(fields[i])
        key, _, value = os.fsdecode(fields[i + 1]).partition("\n")
        origin_file = origin[5:] if origin.startswith("file:") else ""
        if origin_file:
            watch.append(origin_file)
        section, _, rest = key.partition(".")
        name, _, var = rest.rpartition(".")
        if section == "filter" and name:
            filters.add(name)
        elif section == "diff" and name:
            diffs.add(name)
        elif section in ("include", "includeif") and var == "path" and value:
            target = os.path.expanduser(value)
            if not os.path.isabs(target) and origin_file:
                target = os.path.join(os.path.dirname(origin_file), target)
            watch.append(target)
    return sorted(filters), sorted(diffs), watch


def _driver_flags(filters: list[str], diffs: list[str]) -> tuple[str, ...]:
    flags: list[str] = []
    for name in filters:
        for var in ("clean", "smudge", "process"):
            flags += ["-c", f"filter.{name}.{var}="]
        flags += ["-c", f"filter.{name}.required=false"]
    for name in diffs:
        flags += ["-c", f"diff.{name}.textconv=cat", "-c", f"diff.{name}.command="]
    return tuple(flags)


def private_env(env: Mapping[str, str]) -> dict[str, str]:
    """For our own repositories (GIT_DIR set): no user or system config at all."""
    return {**env, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _cached(root: Path, env: Mapping[str, str]) -> tuple[str, ...] | None:
    key = (str(root), env.get("GIT_DIR", ""))
    hit = _cache.get(key)
    if hit is None:
        return None
    sig, flags = hit
    watched = [p for p, *_ in sig]
    return flags if _stat_sig(watched) == sig else None


def _store(root: Path, env: Mapping[str, str], out: bytes | None) -> tuple[str, ...]:
    filters, diffs, watch = _parse(out or b"")
    flags = BASE_FLAGS + _driver_flags(filters, diffs)
    _cache[(str(root), env.get("GIT_DIR", ""))] = (_stat_sig(_config_files(root, env) + watch), flags)
    return flags


def scan_argv() -> list[str]:
    return ["git", "config", "-z", "--show-origin", "--includes", "--get-regexp", SCAN_REGEXP]


def safe_flags_sync(root: Path, env: Mapping[str, str]) -> tuple[str, ...]:
    """The `-c` flags for a git call in `root` (blocking; for code already off the loop)."""
    flags = _cached(root, env)
    if flags is not None:
        return flags
    try:
        proc = subprocess.run(
            scan_argv(), cwd=root, env=dict(env), stdin=subprocess.DEVNULL, capture_output=True, timeout=30, check=False
        )
        out = proc.stdout if proc.returncode == 0 else b""
    except (OSError, subprocess.SubprocessError):
        out = b""
    return _store(root, env, out)


async def safe_flags(root: Path, env: Mapping[str, str]) -> tuple[str, ...]:
    """The `-c` flags for a git call in `root` (see the module docstring)."""
    import asyncio

    flags = _cached(root, env)
    if flags is not None:
        return flags
    try:
        proc = await asyncio.create_subprocess_exec(
            *scan_argv(),
            cwd=str(root),
            env=dict(env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        out, _ = await proc.communicate()
        if proc.returncode != 0:
            out = b""
    except OSError:
        out = b""
    return _store(root, env, out)
