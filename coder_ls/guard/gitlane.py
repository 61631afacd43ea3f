"""The git lane: git's writes run in one-shot sandboxes where `.git` is writable, except what
git executes or trusts.

In the agent's persistent shell `.git` is read-only whole, so `git add`, `commit`,
`checkout -b`, `stash` fail there. `route` picks the lines that may run once in a sandbox
of their own with `.git` writable (`lane_args`): every simple command is `git` with a
builtin subcommand, or a helper that runs nothing (`cd` inside the workspace, `echo`,
`printf`, `cat` feeding a here-doc, `true`, `:`); at least one git command writes; and
nothing in the line can run a program the agent chose or point git at another repository
(no `-c` but inert keys, no `--exec-path`/`--git-dir`/`--work-tree`/`--config-env`, no
`rebase --exec`, no alias, no assignment but a few inert variables, no path into `.git`,
no redirection outside the workspace). The line is parsed by the one shell parser
(`shellparse`), and its syntax tree may hold only the shapes such a line needs: `&&`,
`||`, `;`, here-docs, `$(…)`, quotes, `$PWD` (no pipe, `&`, subshell, loop, function,
arithmetic or other variable).

What the lane still runs that the agent may have written: the user's hooks and configured
programs run there (sandboxed), and a hook may run workspace scripts (husky -> `npm test`).
So the lane pins, read-only, what git executes or trusts (`INTERNALS`, in the git dir and in
each `worktrees/*` and `modules/**` one, and a `core.hooksPath` inside the workspace);
a missing `hooks/` or `info/` is held by an empty directory, and a missing `commondir`
(which would send git to another git dir, with its own config) by a file saying `.` ("the
common dir is this one": git behaves the same; libgit2 cannot open the repository while
it is there) when a hook or a configured program could run. `prepare` makes the
placeholders and the mounts; `release`, once the sandbox is gone, removes the placeholders
that are still ours and moves any internal that appeared (`config.worktree`, a new
`commondir`, an `alternates` file, new `exec` lines in a rebase's todo) to
`.coder/quarantine/<time>/`.

No lane for a repository whose `.git` is a file (a linked worktree, a submodule's checkout)
or a link, nor for a cwd inside a nested repository. See docs/security.md ("Git in the
sandbox (the git lane)").
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from coder_ls.guard.shellparse import Command, parse, syntax
from coder_ls.guard.shellparse.indirect import GIT_BUILTINS

# What git executes or trusts in a git dir (relative to it): pinned read-only in the lane.
INTERNALS = ("config", "config.worktree", "hooks", "info", "commondir", "objects/info/alternates")
PLACEHOLDER_DIRS = ("hooks", "info")
COMMONDIR_PLACEHOLDER = b".\n"
TODO = "rebase-merge/git-rebase-todo"  # `exec` lines there run on the next `rebase --continue`
QUARANTINE = Path(".coder") / "quarantine"

# git's global options that change nothing but output or pathspec reading.
_GLOBAL_FLAGS = frozenset(
    "--no-pager -P --no-optional-locks --literal-pathspecs --glob-pathspecs --noglob-pathspecs "
    "--icase-pathspecs --no-replace-objects --no-advice".split()
)
# `-c` keys that name no program and no path git trusts (lower-case; `color.*`, `advice.*` too).
# `core.pager` is inert here: the lane has no terminal, and GIT_PAGER=cat beats it.
INERT_KEYS = frozenset(
    "user.name user.email author.name author.email committer.name committer.email commit.gpgsign tag.gpgsign "
    "core.pager core.quotepath core.autocrlf core.safecrlf core.eol core.abbrev init.defaultbranch merge.ff "
    "merge.conflictstyle pull.rebase commit.verbose commit.cleanup commit.status status.short status.branch "
    "status.showuntrackedfiles rebase.autosquash rebase.autostash rebase.updaterefs rerere.enabled "
    "i18n.commitencoding log.decorate log.abbrevcommit diff.noprefix diff.renames diff.algorithm".split()
)
_INERT_PREFIXES = ("color.", "advice.")
# Variables a lane line may assign (and which the lane takes from the agent's exports).
INERT_ENV = re.compile(r"GIT_(AUTHOR|COMMITTER)_(NAME|EMAIL|DATE)|LANG|LC_[A-Z]+|TZ")

# Subcommands a lane line may run. Left out on purpose: `config` (the config stays pinned:
# nothing for the lane to do), `init` (the workspace's own `.git` is made outside; `git init
# sub` works in the persistent shell), `worktree` and `submodule` (they make git dirs with
# their own `commondir`, and clone), the network (`clone`, `fetch`, `pull`, `push`,
# `remote`), and whatever runs a program it is given (`bisect run`, `filter-branch`,
# `difftool`, `mergetool`, `send-email`, `help`) or external commands (`lfs`, `gui`).
WRITERS = frozenset(
    "add am apply checkout checkout-index cherry-pick commit commit-tree hash-object merge mktag mktree mv "
    "pack-refs read-tree rebase rerere reset restore revert rm switch update-index update-ref write-tree".split()
)
SOMETIMES = frozenset("branch tag stash notes symbolic-ref reflog".split())  # write or list, by arguments
READERS = frozenset(
    "status diff log show rev-parse ls-files ls-tree cat-file describe shortlog blame annotate rev-list "
    "show-ref for-each-ref name-rev merge-base diff-tree diff-index diff-files whatchanged count-objects "
    "check-ignore check-attr check-ref-format var version grep range-diff cherry show-branch clean".split()
)
assert (WRITERS | SOMETIMES | READERS) <= GIT_BUILTINS
# the options after which any text is a message or a message file, whatever it holds
# (`git commit -m "$(cat <<'EOF' … EOF)"`); anywhere else a word that is not a literal could be
# an option (`--exec=…`)
_MESSAGE = re.compile(r"-m|--message|-F|--file|-[a-zA-Z]*[mF]")
_MESSAGE_TAKERS = frozenset("commit tag merge stash notes commit-tree".split())  # `rebase -m` is --merge
_WRITER_WORDS = WRITERS | SOMETIMES
BUILTIN_STRATEGIES = frozenset("ort recursive resolve octopus ours subtree".split())
# short options that take a value, per subcommand (the rest of a `-abc` cluster is that value)
_SHORT_VALUE = {"rebase": "sXSC", "merge": "sXmFS", "cherry-pick": "mXS", "revert": "mXS", "grep": "OefABCm"}
_BRANCH_WRITES = frozenset(
    "-d -D -m -M -c -C -f -u --delete --move --copy --force --set-upstream-to --unset-upstream "
    "--edit-description --create-reflog --track --no-track".split()
)
_TAG_LISTS = frozenset("-l --list -v --verify -n --contains --no-contains --points-at --merged --no-merged".split())
_SYNTAX = frozenset(
    "program list command command_name word string string_content raw_string ansi_c_string concatenation number "
    "redirected_statement file_redirect file_descriptor heredoc_redirect heredoc_start heredoc_body "
    "heredoc_content heredoc_end herestring_redirect command_substitution simple_expansion expansion "
    "variable_name variable_assignment declaration_command comment".split()
)
# the tokens between them: lists, quotes, substitutions, here-docs, redirections
_TOKENS = frozenset(("&&", "||", ";", "\n", "$(", ")", "`", '"', "$", "${", "}", "=", "export", "<<", "<<-", "<<<"))
_TOKENS |= {"<", ">", ">>", ">|", "&>", "&>>", ">&"}
_HELPERS = frozenset(("cd", "echo", "printf", "cat", "true", ":"))


@dataclass(frozen=True)
class Lane:
    """A line the git lane runs: in `cwd`, on the repository whose git dir is `gitdir`."""

    root: str
    gitdir: str
    cwd: str
    carries: bool  # the line has a `cd` or `export`, which end with the lane


def route(command: str, root: str | Path, cwd: str | Path) -> Lane | None:
    """The lane for `command` run in `cwd` of the workspace `root`, or None (the persistent
    shell runs it)."""
    lane, _why = _route(command, str(root), str(cwd))
    return lane


def why_not(command: str, root: str | Path, cwd: str | Path) -> str | None:
    """Why `route` gives no lane (for tests and logs); None when it gives one."""
    return _route(command, str(root), str(cwd))[1]


def _route(command: str, root_s: str, cwd_s: str) -> tuple[Lane | None, str | None]:
    if "git" not in command or _WRITER_WORDS.isdisjoint(re.findall(r"[a-z][a-z-]*", command)):
        return None, "no git command in it writes"  # cheap: most lines are not git writes
    if len(command) > 64 * 1024 or "\0" in command:
        return None, "too long, or a NUL"
    root = Path(os.path.realpath(root_s))
    gitdir = root / ".git"
    if not gitdir.is_dir() or gitdir.is_symlink():
        return None, ".git is not a directory of the workspace"
    cwd = Path(os.path.realpath(cwd_s))
    if not _inside(cwd, root) or _inside(cwd, gitdir):
        return None, "the cwd is not in the workspace's working tree"
    why, carries = _shape(command)
    if why:
        return None, why
    line = parse(command, cwd=str(cwd), root=str(root))
    if not line.parsed or line.unknown_scripts or line.functions:
        return None, "the line is not fully parsed, or defines a function"
    places = [cwd]
    writes = False
    for cmd in line.commands:
        why = _common(cmd)
        if why:
            return None, why
        program = cmd.words[0]
        if program == "cd":
            if cmd.origin:
                return None, "a cd inside a substitution"
            target = cmd.words[1] if len(cmd.words) == 2 else None
            if target is None or target.startswith(("~", "-")):
                return None, "a cd whose target is not one literal path"
            places += [_resolve(p, target) for p in list(places)]
            carries = True
        elif program == "git":
            why, wrote, dirs = _git(cmd, places, root, gitdir)
            if why:
                return None, why
            writes = writes or wrote
            places += dirs
        elif program == "printf" and any(w == "-v" or (w or "").startswith("-v") for w in cmd.args):
            return None, "printf -v assigns a variable"
        elif program == "cat" and cmd.args:
            return None, "cat reads a file (only a here-doc is fed)"
    for place in places:
        if not _inside(place, root) or _inside(place, gitdir):
            return None, f"{place} is not in the workspace's working tree"
        if _nested_repo(place, root):
            return None, f"{place} is in a nested repository"
    for redirect in line.redirects:
        if redirect.writes and redirect.target != "/dev/null":
            if redirect.target is None or any(_bad_path(p, redirect.target, root, gitdir) for p in places):
                return None, f"a redirection writes outside the working tree: {redirect.target}"
    if not writes:
        return None, "no git command in it writes"
    return Lane(str(root), str(gitdir), str(cwd), carries), None


def _shape(command: str) -> tuple[str | None, bool]:
    """(why not, whether it exports): only the syntax a lane line needs; assignments only of
    `INERT_ENV` names."""
    exports = False
    for kind, named, text, parent in syntax(command):
        why = _node(kind, named, text, parent)
        if why:
            return why, exports
        exports = exports or kind == "declaration_command"
    return None, exports


def _node(kind: str, named: bool, text: str, parent: str) -> str | None:
    if named and kind not in _SYNTAX:
        return f"the line holds a {kind}"
    if not named and kind not in _TOKENS:
        return f"the line holds `{kind}`"
    if kind in ("simple_expansion", "expansion") and text not in ("$PWD", "${PWD}"):
        return f"the line reads a variable ({text}): the lane does not have the agent's"
    if kind == "variable_assignment":
        name = text.partition("=")[0].rstrip("+")
        if not INERT_ENV.fullmatch(name):
            return f"the line assigns {name}"
    if kind == "declaration_command" and not text.startswith("export"):
        return "the line declares variables"
    if parent == "declaration_command" and kind not in ("variable_assignment", "variable_name", "export"):
        return "export with options or values that are not assignments"
    return None


def _common(cmd: Command) -> str | None:
    first = cmd.words[0] if cmd.words else None
    if first is None or (first != "git" and first not in _HELPERS):
        return f"{first or 'a command that is not a literal'} is not git or a helper that runs nothing"
    if cmd.wrappers or cmd.background or cmd.in_pipeline or cmd.args_from_stdin:
        return "a wrapper, a pipe or a background job"
    for name in cmd.assignments:
        if not INERT_ENV.fullmatch(name):
            return f"{name}= for one command"
    return None


def _git(cmd: Command, places: list[Path], root: Path, gitdir: Path) -> tuple[str | None, bool, list[Path]]:
    """(why not, whether it writes, the `-C` directories) of one git command."""
    words = list(cmd.words)
    dirs: list[Path] = []
    i = 1
    while i < len(words):
        w = words[i]
        if w is None:
            return "a git option that is not a literal", False, dirs
        if w == "-c":
            value = words[i + 1] if i + 1 < len(words) else None
            key = (value or "").partition("=")[0].lower()
            if value is None or not (key in INERT_KEYS or key.startswith(_INERT_PREFIXES)):
                return f"git -c {value}: only inert keys", False, dirs
            i += 2
            continue
        if w == "-C":
            target = words[i + 1] if i + 1 < len(words) else None
            if target is None:
                return "git -C with no literal directory", False, dirs
            new = [_resolve(p, target) for p in places]
            dirs += new
            places = places + new
            i += 2
            continue
        if not w.startswith("-"):
            break
        if w not in _GLOBAL_FLAGS:
            return f"git {w}", False, dirs
        i += 1
    sub = words[i] if i < len(words) else None
    if sub is None or sub not in WRITERS | SOMETIMES | READERS:
        return f"git {sub or ''}: not a subcommand the lane runs", False, dirs
    args = words[i + 1 :]
    for k, arg in enumerate(args):
        if arg is None and not (sub in _MESSAGE_TAKERS and k and _MESSAGE.fullmatch(args[k - 1] or "")):
            return f"git {sub}: an argument that is not a literal (only a message may be one)", False, dirs
    for arg in (a for a in args if a is not None):
        for path in (arg, arg.partition("=")[2] if arg.startswith("-") else ""):
            if path and any(_bad_path(p, path, root, gitdir, outside_ok=True) for p in places):
                return f"git {sub} {arg}: a path inside .git", False, dirs
    why = _options(sub, args)
    if why:
        return why, False, dirs
    return None, _writes(sub, args), dirs


def _options(sub: str, args: list[str | None]) -> str | None:
    """Options that run a program the agent names, or reach outside refs/."""
    shorts = _SHORT_VALUE.get(sub)
    for k, a in enumerate(args):
        if a is None or a == "--":
            continue
        nxt = args[k + 1] if k + 1 < len(args) else None
        if sub == "rebase" and (a == "--exec" or a.startswith("--exec=") or _short(a, "x", shorts)):
            return "rebase --exec runs a command"
        if sub == "grep" and (a.startswith("--open-files-in-pager") or _short(a, "O", shorts)):
            return "grep -O runs a program"
        if sub in ("rebase", "merge", "cherry-pick", "revert"):
            strategy = None
            if a == "--strategy" or (a == "-s" and sub in ("rebase", "merge")):
                strategy = nxt
            elif a.startswith("--strategy="):
                strategy = a.partition("=")[2]
            elif sub in ("rebase", "merge") and re.fullmatch(r"-s.+", a):
                strategy = a[2:]
            if (strategy is not None or a in ("--strategy", "-s")) and strategy not in BUILTIN_STRATEGIES:
                if not (a == "-s" and sub in ("cherry-pick", "revert")):  # there: --signoff
                    return f"{sub} with merge strategy {strategy}: only git's own"
    if sub in ("update-ref", "symbolic-ref"):
        if "--stdin" in args:
            return "update-ref --stdin"
        names = [a for a in args if a is None or not a.startswith("-")]
        refs = names[:1] if sub == "update-ref" else names[:2]
        if any(r is None or not (r == "HEAD" or r.startswith("refs/")) for r in refs):
            return f"{sub} of a name outside refs/"
    return None


def _short(arg: str, letter: str, takes_value: str | None) -> bool:
    """Whether a `-abc` cluster holds `-<letter>` (a value-taking option ends the cluster)."""
    if not arg.startswith("-") or arg.startswith("--"):
        return False
    for ch in arg[1:]:
        if ch == letter:
            return True
        if takes_value and ch in takes_value:
            return False
    return False


def _writes(sub: str, args: list[str | None]) -> bool:
    if sub in WRITERS:
        return True
    if sub not in SOMETIMES:
        return False
    positional = [a for a in args if a is None or not a.startswith("-")]
    flags = {a.partition("=")[0] for a in args if a is not None and a.startswith("-")}
    if sub == "branch":
        return bool(flags & _BRANCH_WRITES) or (bool(positional) and not flags & {"-l", "--list", "--contains"})
    if sub == "tag":
        return bool(flags & {"-d", "--delete"}) or (bool(positional) and not flags & _TAG_LISTS)
    if sub == "stash":
        return not positional or positional[0] not in ("list", "show")
    if sub == "notes":
        return bool(positional) and positional[0] not in ("list", "show", "get-ref")
    if sub == "symbolic-ref":
        return len(positional) >= 2 or bool(flags & {"-d", "--delete"})
    return bool(positional) and positional[0] in ("expire", "delete")  # reflog


def _inside(path: Path, top: Path) -> bool:
    return path == top or path.is_relative_to(top)


def _resolve(base: Path, target: str) -> Path:
    return Path(os.path.realpath(os.path.join(base, os.path.expanduser(target))))


def _bad_path(base: Path, target: str, root: Path, gitdir: Path, *, outside_ok: bool = False) -> bool:
    """A path into `.git` (by name or through a link), or outside the workspace."""
    plain = Path(os.path.normpath(os.path.join(base, target)))
    real = _resolve(base, target)
    if _inside(plain, gitdir) or _inside(real, gitdir):
        return True
    return not outside_ok and not _inside(real, root) and str(real) != os.devnull


def _nested_repo(place: Path, root: Path) -> bool:
    """A `.git` between `place` and the workspace's root: git would use that repository."""
    d = place
    while d != root and _inside(d, root):
        if os.path.lexists(d / ".git"):
            return True
        d = d.parent
    return False


# --- the sandbox's mounts and placeholders -------------------------------------------------


@dataclass
class Held:
    """What one lane run holds on the host."""

    root: str
    gitdir: str
    args: list[str]
    placeholders: list[tuple[str, int, int]] = field(default_factory=list)  # (path, dev, ino)
    before: frozenset[str] = frozenset()  # internals that existed (not placeholders)
    todo_exec: frozenset[str] = frozenset()  # `exec` lines of a rebase's todo before the run


def git_dirs(gitdir: str | Path) -> list[Path]:
    """The git dir, each `worktrees/*` one and each `modules/**` one (a folder with a HEAD)."""
    top = Path(gitdir)
    out = [top]
    try:
        out += sorted(p for p in (top / "worktrees").iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        pass
    stack = [(top / "modules", 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            entries = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
        except OSError:
            continue
        for p in entries:
            if (p / "HEAD").is_file():
                out.append(p)
                if depth < 8:
                    stack.append((p / "modules", depth + 1))
            elif depth < 8:
                stack.append((p, depth + 1))
    return out


def internals(gitdir: str | Path) -> set[str]:
    """The `INTERNALS` that exist, in every git dir of the repository."""
    return {str(d / name) for d in git_dirs(gitdir) for name in INTERNALS if os.path.lexists(d / name)}


def lane_args(root: str | Path, gitdir: str | Path, pins: Iterable[str]) -> list[str]:
    """bubblewrap mounts over the layout: `.git` writable, then each pin read-only over it."""
    args = ["--bind", str(gitdir), str(gitdir)]
    for pin in sorted(set(pins)):
        args += ["--ro-bind", pin, pin]
    return args


_PROGRAM_KEYS = (
    r"^(core\.(hookspath|fsmonitor)|diff\.external|filter\..+\.(clean|smudge|process)|merge\..+\.driver"
    r"|diff\..+\.(textconv|command)|gpg\.(.+\.)?program)$"
)


def configured_programs(root: str, gitdir: str, env: Mapping[str, str]) -> dict[str, str]:
    """The keys of the effective config (includes followed) that name a program git runs on
    its own, with their values. Reading config runs nothing."""
    argv = ["git", f"--git-dir={gitdir}", "config", "-z", "--includes", "--get-regexp", _PROGRAM_KEYS]
    try:
        proc = subprocess.run(argv, cwd=root, env=dict(env), stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return {"(config unreadable)": ""}
    if proc.returncode not in (0, 1):
        return {"(config unreadable)": ""}
    out: dict[str, str] = {}
    for item in proc.stdout.split(b"\0"):
        key, _, value = os.fsdecode(item).partition("\n")
        if key and not (key == "core.fsmonitor" and value.lower() in ("false", "no", "off", "0", "")):
            out[key] = value
    return out


def hooks_dir(root: str, gitdir: str, programs: Mapping[str, str]) -> Path:
    """Where git looks for hooks: `core.hooksPath` (relative to the working tree), or hooks/."""
    path = programs.get("core.hookspath")
    if not path:
        return Path(gitdir) / "hooks"
    return Path(os.path.realpath(os.path.join(root, os.path.expanduser(path))))


def any_hook(folder: Path) -> bool:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return False
    return any("." not in e.name and e.is_file() and os.access(e.path, os.X_OK) for e in entries)


def prepare(root: str, gitdir: str, env: Mapping[str, str]) -> Held:
    """Make the placeholders and compute the mounts of one lane run (on the host, before it)."""
    git = Path(gitdir)
    common = git / "commondir"
    if _is_our_commondir(common):  # left by a lane whose server was killed: means the same as none
        os.unlink(common)
    programs = configured_programs(root, gitdir, env)
    hooks = hooks_dir(root, gitdir, programs)
    before = internals(gitdir)
    held = Held(root, gitdir, [], before=frozenset(before), todo_exec=frozenset(_todo_exec(git)))
    for name in PLACEHOLDER_DIRS:
        path = git / name
        if not os.path.lexists(path):
            os.mkdir(path, 0o755)
            st = os.lstat(path)
            held.placeholders.append((str(path), st.st_dev, st.st_ino))
    if not os.path.lexists(common) and (programs or any_hook(hooks)):
        fd = os.open(common, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o444)
        try:
            os.write(fd, COMMONDIR_PLACEHOLDER)
            st = os.fstat(fd)
        finally:
            os.close(fd)
        held.placeholders.append((str(common), st.st_dev, st.st_ino))
    pins = set(before) | {p for p, _d, _i in held.placeholders}
    if hooks.exists() and _inside(hooks, Path(root)):
        pins.add(str(hooks))
    held.args = lane_args(root, gitdir, pins)
    return held


def _is_our_commondir(path: Path) -> bool:
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size != len(COMMONDIR_PLACEHOLDER):
            return False
        return path.read_bytes() == COMMONDIR_PLACEHOLDER
    except OSError:
        return False


def _todo_exec(git: Path) -> set[str]:
    try:
        text = (git / TODO).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return set()
    return {ln.strip() for ln in text.splitlines() if re.match(r"\s*(x|exec)\s", ln)}


def release(held: Held, *, gone: bool = True) -> list[str]:
    """After the run, once its sandbox is `gone`: remove the placeholders still ours, move
    what appeared to `.coder/quarantine/<time>/`; the moved paths, relative to the root."""
    root, git = Path(held.root), Path(held.gitdir)
    ours: set[str] = set()
    for path, dev, ino in held.placeholders:
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) != (dev, ino):
            continue  # replaced: not ours any more (quarantined below)
        ours.add(path)
        if not gone:
            continue  # a process may still be in the sandbox: keep holding the name
        if stat.S_ISDIR(st.st_mode):
            try:
                os.rmdir(path)
            except OSError:
                pass  # not empty (it cannot be while pinned); the quarantine below takes it
            else:
                continue
        elif _is_our_commondir(Path(path)):
            os.unlink(path)
            continue
        ours.discard(path)
    appeared = sorted(internals(git) - held.before - ours)
    if _todo_exec(git) - held.todo_exec:
        appeared.append(str(git / TODO))
    return [_quarantine(Path(p), root) for p in appeared]


def _quarantine(path: Path, root: Path) -> str:
    """Move `path` under `.coder/quarantine/<time>/` (`.git` spelled `git` there, so that no
    folder in it looks like a repository); removed when it cannot be moved."""
    rel = path.relative_to(root)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    dest = root / QUARANTINE / stamp / Path(*("git" if part == ".git" else part for part in rel.parts))
    n = 1
    while os.path.lexists(dest):
        dest = dest.with_name(f"{dest.name}.{n}")
        n += 1
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.rename(path, dest)
    except OSError:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        return f"{rel} (removed)"
    return f"{rel} -> {dest.relative_to(root)}"
