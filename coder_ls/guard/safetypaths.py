"""The paths a refused-command check judges: what a word names once `~`, `..`, globs and
links are followed (never raising: a path that cannot be resolved is kept as written),
whether destroying or writing it is off limits, and the cwd a `cd` leads to."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from coder_ls.guard.protected import HOME_PROTECTED
from coder_ls.guard.shellparse import Command
from coder_ls.guard.shellparse.indirect import MKTEMP_NAME
from coder_ls.guard.writetargets import Write, writes

SAFE_DEVICES = set("null zero full random urandom stdin stdout stderr tty ptmx console fd pts shm".split())

SYSTEM_DIRS = ("/etc", "/boot", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/var/lib")

# Under the home directory: files that run code at the next login, shell, git call or
# boot, and the keys that let someone in. Writing them is how code persists.
HOME_STARTUP = frozenset(
    ".bashrc .bash_profile .bash_login .bash_logout .profile .zshrc .zprofile .zshenv .zlogin .kshrc .cshrc "
    ".tcshrc .xinitrc .xprofile .xsessionrc .pam_environment .gitconfig .npmrc .pypirc .netrc "
    # what the user's editor, Claude Code and tool configurations run or trust (docs/security.md,
    # "What is protected": the list that follows the user's home)
    ".vimrc .emacs .claude.json .docker/config.json .kube/config .aws/config .cargo/config.toml "
    ".pip/pip.conf".split()
)

HOME_STARTUP_DIRS = (
    ".ssh",
    ".gnupg",
    ".config/autostart",
    ".config/systemd",
    ".config/fish",
    ".config/git",
    ".local/bin",
    ".config/coder",
    ".claude",
    ".config/Code/User",
    ".vscode",
    ".config/nvim",
    ".vim",
    ".emacs.d",
    ".config/emacs",
    ".config/pip",
)

# Every entry under the home a write there is refused for: the check's own lists above and
# the one list the sandbox and the file tools hold (`protected.HOME_PROTECTED`), so that
# what the agent's sandbox keeps read-only is never planted by a `!` line either.
HOME_ENTRIES = tuple(dict.fromkeys((*HOME_STARTUP_DIRS, *HOME_PROTECTED)))

CRON_DIRS = ("/var/spool/cron", "/etc/cron.d", "/etc/cron.daily", "/etc/cron.hourly")


@dataclass
class CheckContext:
    root: Path  # resolved
    home: Path
    cwd: Path | None  # None once a `cd` went somewhere unknown
    temps: tuple[Path, ...]
    depth: int = 0
    links: dict[Path, Path] | None = None  # `ln -s TARGET LINK` earlier in the line: LINK -> TARGET
    tilde: Path | None = None  # what `~` expands to (HOME as the shell holds it); None: `home`
    cdpath: tuple[str, ...] = ()  # the shell's CDPATH entries
    env: Mapping[str, str] | None = None  # the shell's environment, when known
    forks: int = 0  # walks forked at a `cd` in a subshell
    tilde_unknown: bool = False  # HOME is not known at this command: `~` names nothing known
    tilde_from: str | None = ""  # the HOME value `tilde` was worked out from


def work_tree_top(cwd: Path) -> str | None:
    """The work tree `git rev-parse --show-toplevel` names from `cwd`: the nearest folder
    holding `.git` (found by looking, not by running git in a repository that may be hostile)."""
    for folder in (cwd, *cwd.parents):
        try:
            if os.path.lexists(folder / ".git"):
                return str(folder)
        except (OSError, ValueError):
            return None
    return None


def real_path(path: Path) -> Path:
    """The real path, as far as it can be resolved: a component that cannot be read
    (`/proc/1/root`, EACCES, ELOOP, ENAMETOOLONG) and what follows are kept as written."""
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError):
        pass
    path = Path(os.path.normpath(path))
    for parent in path.parents:
        try:
            return Path(os.path.realpath(parent, strict=False)) / path.relative_to(parent)
        except (OSError, ValueError):
            continue
    return path


def change_dir(cmd: Command, ctx: CheckContext, cdpath: bool) -> None:
    args = cmd.args
    targets = [a for a in args if a is None or not a.startswith("-") or a == "-"]
    if cmd.program == "popd" or (targets and (targets[0] is None or targets[0] == "-")):
        ctx.cwd = None
        return
    first = targets[0] if targets else None
    if first is not None and ctx.cdpath and not first.startswith(("/", "./", "../", "~")) and first not in (".", ".."):
        # bash tries each CDPATH entry in turn (an empty one is the cwd): the first that
        # exists wins; when none does yet, the first entry is assumed
        tries = [(resolve_word(f"{entry}/{first}", ctx) if entry else resolve_word(first, ctx)) for entry in ctx.cdpath]
        found = next((t for t in tries if t and t[0].is_dir()), None) or (tries[0] if tries else None)
        ctx.cwd = found[0] if found else None
        return
    if targets and cdpath and not str(targets[0]).startswith(("/", ".", "~")):
        ctx.cwd = None  # CDPATH may send a relative `cd` anywhere
        return
    resolved = resolve_word(targets[0], ctx) if targets and targets[0] is not None else (ctx.home, False)
    ctx.cwd = resolved[0] if resolved else None


def resolve_word(word: str, ctx: CheckContext, *, resolve: bool = True) -> tuple[Path, bool] | None:
    """The real path a word names (None if unknowable) and whether it is a glob's directory."""
    text = word
    if text == "~+" or text.startswith("~+/"):
        if ctx.cwd is None:
            return None
        text = str(ctx.cwd) + text[2:]
    if ctx.cwd is not None:
        text = re.sub(r"\$(\{PWD\}|PWD\b)|\$\(pwd\)|`pwd`", str(ctx.cwd), text)
    if "$" in text or "`" in text or text == "-":
        return None  # a variable or output we cannot know
    if (text == "~" or text.startswith("~/")) and ctx.tilde_unknown:
        return None
    if text == "~" or text.startswith("~/"):
        text = str(ctx.tilde or ctx.home) + text[1:]
    elif text.startswith("~") and (text := os.path.expanduser(text)).startswith("~"):
        return None
    parts = text.split("/")
    glob_at = next((k for k, part in enumerate(parts) if re.search(r"[*?\[]", part)), None)
    if glob_at is not None:
        text = "/".join(parts[:glob_at]) or ("/" if text.startswith("/") else ".")
    if not text.startswith("/") and ctx.cwd is None:
        return None
    path = Path(ctx.cwd or "/", text)
    if ctx.links and (text.endswith("/") or glob_at is not None or any(p in ctx.links for p in path.parents)):
        path = through_links(Path(os.path.normpath(path)), ctx)  # into a link this line made
    if not resolve:
        return Path(os.path.normpath(path)), glob_at is not None
    if glob_at is not None or text.endswith("/") or path.name in ("", ".", "..") or path == path.parent:
        return real_path(path), glob_at is not None  # the directory itself
    return real_path(path.parent) / path.name, False  # a link is not followed


def off_limits(real: Path, ctx: CheckContext, *, root_ok: bool = False) -> str | None:
    """Why destroying `real` is off limits, or None if it is in the workspace or a temp dir
    (`root_ok`: what is beneath `real`, not `real` itself)."""
    if real.name == MKTEMP_NAME:
        return None  # what `$(mktemp)` made in this line: nothing else was there
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
    cache = ctx.home / ".cache"
    if real != cache and cache in real.parents:
        return None  # caches (XDG): rebuilt by whoever made them
    if ctx.home in real.parents:
        return f"{real}, which is outside the workspace, in your home directory"
    if any(temp in real.parents or (root_ok and temp == real) for temp in ctx.temps):
        return None
    return f"{real}, which is outside the workspace ({ctx.root})"


def system_path(real: Path) -> str | None:
    text = str(real)
    if real.parent == Path("/") or any(text == d or text.startswith(d + "/") for d in SYSTEM_DIRS):
        return f"{real}, a system path"
    return None


def note_link(args: list[str | None], ctx: CheckContext) -> None:
    """`ln -s TARGET LINK`, `ln -s TARGET DIR/`, `ln -s -t DIR TARGET`: later words under
    the link go to TARGET (where the link is made is `writetargets`' answer for `ln`)."""
    for w in writes("ln", args) or []:
        if w.word is None:
            continue
        if w.kind == "into" and (w.folder or w.word.endswith("/") or _is_folder(w.word, ctx)):
            pairs = [(f"{w.word.rstrip('/')}/{os.path.basename(s.rstrip('/'))}", s) for s in w.sources if s]
        else:
            pairs = [(w.word, w.sources[0])] if w.sources and w.sources[0] else []
        for name, target in pairs:
            source = resolve_word(target, ctx, resolve=False)
            link = resolve_word(name, ctx, resolve=False)
            if source and link:
                if ctx.links is None:
                    ctx.links = {}
                ctx.links[link[0]] = source[0]


def through_links(path: Path, ctx: CheckContext) -> Path:
    for link, target in (ctx.links or {}).items():
        if path == link or link in path.parents:
            return target / path.relative_to(link)
    return path


def write_refusal(target: str, ctx: CheckContext, *, truncate: bool, link: bool = False) -> str | None:
    """Why writing to `target` is destructive or persistent (a disk device, the kernel,
    system files, the files that run code at login or boot, keys)."""
    plain = None if target.isdigit() else resolve_word(target, ctx, resolve=False)
    if not plain:
        if ctx.cwd is None and not target.startswith(("/", "~", "$")) and startup_name(target):
            return f"writing {target} after a `cd` to a place that cannot be known may plant code in your home"
        return None
    if plain[0].as_posix().startswith("/dev/"):
        text = plain[0].as_posix()  # a device node: never resolved (/dev/stdout is a link)
    elif link:  # `ln` makes the name itself (a link there is replaced, not followed)
        text = str(real_path(plain[0].parent) / plain[0].name)
    else:
        text = str(real_path(through_links(plain[0], ctx)))  # a write follows links
    if text.startswith("/dev/") and text[5:].partition("/")[0] not in SAFE_DEVICES:
        return f"writing to the device {text} would destroy its data"
    if any(text == d or text.startswith(d + "/") for d in ("/proc", "/sys")):
        return f"writing to {text} changes the running kernel"
    if any(text == d or text.startswith(d + "/") for d in CRON_DIRS):
        return f"writing {text} schedules commands that would run out of sight"
    if truncate and system_path(Path(text)) and os.path.exists(text):
        return f"overwriting {text} would break the system"
    if any(text.startswith(d + "/") for d in SYSTEM_DIRS):
        return f"writing {text} changes the system's own files"
    if reason := home_startup(Path(text), ctx):
        return reason
    return None


def overwrite_refusal(target: str, ctx: CheckContext, *, link: bool = False) -> str | None:
    """Why replacing `target`'s content loses a file the user has: an existing regular file
    outside the workspace, the temp folders and `~/.cache` (a new file there is fine; a
    link, a device or a folder is not this class)."""
    plain = None if target.isdigit() else resolve_word(target, ctx, resolve=False)
    if not plain or plain[0].as_posix().startswith("/dev/"):
        return None
    try:  # one stat first: most targets are new files, whose real path is not needed
        if not (plain[0].is_file() or ctx.links) or (link and not os.path.lexists(plain[0])):
            return None
        path = real_path(plain[0].parent) / plain[0].name if link else real_path(through_links(plain[0], ctx))
        if not path.is_file():
            return None
    except OSError:
        return None
    if where := off_limits(path, ctx):
        return f"it would overwrite {where}, an existing file (write it inside the workspace, or move it away first)"
    return None


# A folder that receives names not known before the command runs (an archive extracted, a
# folder's contents copied): refused where an unknown name could replace what the system,
# the user's home or the user's shell rely on. /usr/local, /opt and folders under the home
# that hold no startup file are where software is unpacked: they stay free.
_TREE_TOPS = ("/etc", "/boot", "/proc", "/sys", "/usr/bin", "/usr/sbin", *CRON_DIRS)


def tree_refusal(folder: str, ctx: CheckContext) -> str | None:
    resolved = resolve_word(folder if folder.endswith("/") else folder + "/", ctx)
    if resolved is None:
        return None  # not known: not refused (as a redirection to an unknown target)
    real = resolved[0]
    if real == ctx.root or ctx.root in real.parents:
        return None
    why = None
    if real == Path("/") or real == ctx.home or real in ctx.root.parents or str(real) in SYSTEM_DIRS:
        why = off_limits(real, ctx) or f"{real}, a system folder"
    elif any(str(real) == t or str(real).startswith(t + "/") for t in _TREE_TOPS):
        why = f"{real}, a system folder"
    elif home_startup(real, ctx) or _holds_startup(real, ctx):
        why = f"{real}, which holds files that run code at your next login, shell or git call"
    return f"it would put files whose names it does not know into {why}" if why else None


def _holds_startup(real: Path, ctx: CheckContext) -> bool:
    """`real` is a folder of the home on the way to a startup file (`~/.config`, `~/.local`)."""
    return ctx.home in real.parents and any(
        real in (ctx.home / name).parents for name in (*HOME_STARTUP, *HOME_STARTUP_DIRS)
    )


def judge_write(w: Write, ctx: CheckContext) -> str | None:
    """Why the write `w` (`writetargets`) is refused: a startup file, the system, a device
    (`write_refusal`), an existing file outside the workspace overwritten, or unknown names
    put into a folder that must not receive them."""
    if w.word is None:
        return None  # not a literal: a write to an unknown target is not refused
    if w.kind == "tree":
        return write_refusal(w.word, ctx, truncate=False) or tree_refusal(w.word, ctx)
    if w.kind == "into" and (w.folder or w.word.endswith("/") or _is_folder(w.word, ctx)):
        for source in w.sources:
            name = None if source is None else os.path.basename(source.rstrip("/"))
            if name in (None, "", ".", ".."):
                if reason := tree_refusal(w.word, ctx):
                    return reason
            elif reason := _file(f"{w.word.rstrip('/') or '/'}/{name}".replace("//", "/"), w, ctx):
                return reason
        return None
    return _file(w.word, w, ctx)


def _file(word: str, w: Write, ctx: CheckContext) -> str | None:
    if (w.only_new or w.only_existing) and (found := _exists(word, ctx, w.link)) is not None:
        if found if w.only_new else not found:
            return None  # `-n` onto a file that is there, `--existing` onto one that is not: nothing written
    return write_refusal(word, ctx, truncate=w.replaces, link=w.link) or (
        overwrite_refusal(word, ctx, link=w.link) if w.replaces else None
    )


def _exists(word: str, ctx: CheckContext, link: bool) -> bool | None:
    """Whether the name `word` is taken (None: not known), links followed as the write does."""
    plain = resolve_word(word, ctx, resolve=False)
    if not plain:
        return None
    path = real_path(plain[0].parent) / plain[0].name if link else real_path(through_links(plain[0], ctx))
    return os.path.lexists(path)


def _is_folder(word: str, ctx: CheckContext) -> bool:
    resolved = resolve_word(word + "/", ctx)
    try:
        return resolved is not None and resolved[0].is_dir()
    except OSError:
        return False


def home_startup(real: Path, ctx: CheckContext) -> str | None:
    home = ctx.home
    if home not in real.parents or ctx.root == real or ctx.root in real.parents:
        return None
    rel = real.relative_to(home).as_posix()
    if rel in HOME_STARTUP or any(rel == d or rel.startswith(d + "/") for d in HOME_ENTRIES):
        return f"writing {real} would plant code that runs at your next login, shell or git call (or a key)"
    return None


def startup_name(relative: str) -> bool:
    """Whether a relative path names a startup file or key wherever it is (`.bashrc`,
    `.ssh/authorized_keys`, `autostart/x.desktop`)."""
    path = relative.rstrip("/")
    name = os.path.basename(path)
    return (
        name in HOME_STARTUP
        or name in ("authorized_keys", "authorized_keys2", "rc", "environment")
        or any(part in path.split("/") for part in (".ssh", ".gnupg", "autostart", "systemd", "cron.d"))
    )


def check_git(shown: str, cmd: Command, ctx: CheckContext) -> str | None:
    """`git clean -f` and `git reset --hard` act on the work tree: the one `--work-tree`,
    `GIT_WORK_TREE` (in the line or held by the shell) or `-C` names, else the cwd's."""
    words = list(cmd.args)
    tree: str | None = dict(cmd.env).get("GIT_WORK_TREE") if "GIT_WORK_TREE" in dict(cmd.env) else "."
    where = "."
    i = 0
    while i < len(words):
        w = words[i]
        if w is None:
            return None
        if w in ("-C", "--work-tree", "--git-dir", "-c", "--namespace") and i + 1 < len(words):
            if w == "-C":  # each -C is taken from the one before
                step = words[i + 1] or "$UNKNOWN"
                where = step if where == "." or step.startswith(("/", "~")) else os.path.join(where, step)
            elif w == "--work-tree":
                tree = words[i + 1]
            i += 2
            continue
        if w.startswith("--work-tree="):
            tree = w.partition("=")[2]
        elif not w.startswith("-"):
            break
        i += 1
    sub, rest = (words[i], [w for w in words[i + 1 :] if w is not None]) if i < len(words) else (None, [])
    destroys = (sub == "clean" and any(re.fullmatch(r"-[a-zA-Z]*f[a-zA-Z]*|--force", w) for w in rest)) or (
        sub == "reset" and "--hard" in rest
    )
    if not destroys:
        return None
    if tree is None:
        return f"`{shown}` would delete files in a work tree that is not known (GIT_WORK_TREE)"
    base = resolve_word(where, ctx)
    if base is None:
        return f"`{shown}` would delete files in `{where}`, which cannot be known"
    resolved = resolve_word(tree if tree.startswith(("/", "~")) else os.path.join(str(base[0]), tree), ctx)
    if resolved is None:
        return f"`{shown}` would delete files in `{tree}`, which cannot be known"
    if why := off_limits(resolved[0], ctx, root_ok=True):
        return f"`{shown}` would delete the untracked or changed files of {why}"
    return None


def in_place(words: list[str]) -> bool | None:
    """Whether `sed`/`perl` edits in place (None: not) keeping the original under a backup
    suffix (`-i.bak`, `-pi.orig`, `--in-place=.bak`: True) or not (`-i`, `-Ei`: False)."""
    kept = None
    for w in words:
        if w == "--in-place" or w.startswith("--in-place="):
            kept = bool(kept) or bool(w.partition("=")[2])
        elif m := re.fullmatch(r"-[a-zA-Z]*?i(.*)", w, re.DOTALL):
            kept = bool(kept) or bool(m.group(1))
    return kept


def edited_files(name: str, args: list[str | None]) -> list[str]:
    """The files `sed -i SCRIPT FILE…` / `perl -i -pe CODE FILE…` rewrite."""
    words = [a for a in args if a is not None]
    explicit = any(a in ("-e", "-f", "--expression", "--file") or a.startswith("--expression=") for a in words)
    explicit = explicit or any(re.fullmatch(r"-[a-zA-Z]*e", a) for a in words)
    files: list[str] = []
    skip = False
    for a in words:
        if skip:
            skip = False
        elif a in ("-e", "-f", "--expression", "--file") or (re.fullmatch(r"-[a-zA-Z]*e", a) and name == "perl"):
            skip = True
        elif not a.startswith("-"):
            files.append(a)
    return files if explicit else files[1:]  # without -e, the first operand is the script


def is_device(path: str) -> bool:
    """`/dev/tcp/host/port`, `/dev/stdin`, `/proc/…/fd`: not a file the user wrote."""
    return path.startswith(("/dev/", "/proc/")) or path in ("-", "/dev")
