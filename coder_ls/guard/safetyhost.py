"""The refused-command check's part for what a command does to the machine beyond writing
files: a container given the host's root, home or system folders read-write (`docker run
-v /:/h`), a kill by a pattern every process matches (`pkill -9 .`), a remount or unmount of
the system's folders (`mount -o remount,ro /`, `umount -a`). Each is a whole class that a
slip of the keyboard makes and nothing ordinary needs; narrower forms run (a named volume,
`-v ~/.m2:/root/.m2`, `:ro`, `pkill -f 'node server.js'`, `umount /mnt/usb`)."""

from __future__ import annotations

import re
from pathlib import Path

from coder_ls.guard.safetypaths import (
    HOME_STARTUP_DIRS,
    SYSTEM_DIRS,
    CheckContext,
    home_startup,
    resolve_word,
)

_CONTAINERS = frozenset({"docker", "podman", "nerdctl"})
_SAMPLE = ("systemd", "init", "sshd", "bash", "Xorg", "kworker/0:1", "a")  # names a kill by pattern must spare
_PKILL_VALUE = frozenset(
    "-g -G -P -s -t -u -U -F -r -q --signal --pgroup --group --parent --session --terminal --euid --uid "
    "--pidfile --ns --nslist --runstates --queue --cgroup --env".split()
)
_KILLALL_VALUE = frozenset("-u -s -o -y -n -Z --user --signal --older-than --younger-than --ns --context".split())
_MOUNT_VALUE = frozenset("-o -t -L -U -T -N -O --options --types --label --uuid --fstab --namespace".split())
_SYSTEM_TOPS = ("/etc", "/boot", "/usr")


def host_refusal(name: str, args: list[str | None] | tuple[str | None, ...], ctx: CheckContext) -> str | None:
    """Why `name ARGS` is refused for what it does to the machine, or None."""
    known = [a for a in args if a is not None]
    if name in _CONTAINERS:
        return _container(known, ctx)
    if name in ("pkill", "killall"):
        return _kill_pattern(name, known)
    if name == "mount":
        return _mount(known, ctx)
    if name == "umount":
        return _umount(known, ctx)
    return None


def _vital(word: str, ctx: CheckContext) -> str | None:
    """What `word` names if it is the filesystem's root, the home, a parent of the
    workspace, a system folder or a startup location of the home."""
    resolved = resolve_word(word if word.endswith("/") else word + "/", ctx)
    if resolved is None:
        return None
    real = resolved[0]
    if real == Path("/"):
        return "/ (the whole filesystem)"
    if real == ctx.home:
        return f"{real} (your home directory)"
    if real in ctx.root.parents:
        return f"{real}, a parent of the workspace"
    if str(real) in SYSTEM_DIRS or any(str(real) == t or str(real).startswith(t + "/") for t in _SYSTEM_TOPS):
        return f"{real}, a system folder"
    if home_startup(real, ctx) or any(real == ctx.home / d for d in HOME_STARTUP_DIRS):
        return f"{real}, which holds code your shell, ssh or git run"
    return None


def _container(words: list[str], ctx: CheckContext) -> str | None:
    """`docker run`/`create` with a bind mount of a vital host folder, read-write."""
    rest = words[1:] if words[:1] == ["container"] else words
    if not rest or rest[0] not in ("run", "create"):
        return None
    binds: list[tuple[str, bool]] = []  # (host path, read-only)
    for i, w in enumerate(rest):
        value = None
        if w in ("-v", "--volume", "--mount") and i + 1 < len(rest):
            value, kind = rest[i + 1], w
        elif w.startswith(("--volume=", "--mount=")):
            kind, _, value = w.partition("=")
        elif w.startswith("-v") and len(w) > 2:
            value, kind = w[2:], "-v"
        if value is None:
            continue
        if kind == "--mount":
            fields = dict(f.partition("=")[::2] for f in value.split(","))
            source = fields.get("source") or fields.get("src")
            ro = "readonly" in fields or "ro" in fields
            if fields.get("type", "volume") == "bind" and source:
                binds.append((source, ro or fields.get("readonly") in ("true", "1")))
        else:
            parts = value.split(":")
            if len(parts) >= 2 and parts[0].startswith(("/", "~", ".", "$")):
                binds.append((parts[0], len(parts) > 2 and "ro" in parts[2].split(",")))
    for source, read_only in binds:
        if not read_only and (where := _vital(source, ctx)):
            return f"gives a container {where}, writable: it runs as root there (add `:ro`, or mount a sub-folder)"
    return None


def _kill_pattern(name: str, words: list[str]) -> str | None:
    """`pkill PATTERN` / `killall -r PATTERN` whose pattern every process name matches
    (`.`, `.*`, `''`), or `pkill -v` (every process but the pattern's)."""
    if name == "killall" and not any(w in ("-r", "--regexp") for w in words):
        return None
    takes = _PKILL_VALUE if name == "pkill" else _KILLALL_VALUE
    flags: set[str] = set()
    operands: list[str] = []
    skip = False
    for w in words:
        if skip:
            skip = False
        elif w in takes:
            skip = True
        elif w.startswith("--"):
            flags.add(w)
        elif w.startswith("-") and len(w) > 1 and not w[1:].isdigit() and not w[1:].isupper():
            flags.update(f"-{c}" for c in w[1:])
        elif not w.startswith("-"):
            operands.append(w)
    if "-P" in words or "--parent" in words or not operands:
        return None  # the children of one process; or no pattern (pkill refuses to run)
    if name == "pkill" and ({"-v", "--inverse"} & flags):
        return "would kill every process but the ones its pattern names"
    try:
        pattern = re.compile(operands[0], re.IGNORECASE if {"-i", "--ignore-case"} & flags else 0)
    except re.error:
        return None
    exact = bool({"-x", "--exact"} & flags) or name == "killall"
    if all((pattern.fullmatch(n) if exact else pattern.search(n)) for n in _SAMPLE):
        return f"would kill every process: the pattern {operands[0]!r} matches any name"
    return None


def _operands(words: list[str], takes: frozenset[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for w in words:
        if skip:
            skip = False
        elif w in takes:
            skip = True
        elif not w.startswith("-"):
            out.append(w)
    return out


def _mount(words: list[str], ctx: CheckContext) -> str | None:
    """A remount of, or a mount over, a vital folder."""
    options = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-o", "--options")]
    options += [w[2:] for w in words if w.startswith("-o") and len(w) > 2]
    options += [w.partition("=")[2] for w in words if w.startswith("--options=")]
    remount = any("remount" in o.split(",") for o in options)
    operands = _operands(words, _MOUNT_VALUE)
    targets = operands[-1:] if remount or len(operands) >= 2 else []
    targets += [words[i + 1] for i, w in enumerate(words[:-1]) if w == "--target"]
    for target in targets:
        if where := _vital(target, ctx):
            return f"would {'remount' if remount else 'mount over'} {where}"
    return None


def _umount(words: list[str], ctx: CheckContext) -> str | None:
    if any(w in ("-a", "--all") or (w.startswith("-") and not w.startswith("--") and "a" in w) for w in words):
        return "would unmount every filesystem"
    for target in _operands(words, frozenset({"-t", "-O", "-N", "--types", "--test-opts", "--namespace"})):
        if where := _vital(target, ctx):
            return f"would unmount {where}"
    return None
