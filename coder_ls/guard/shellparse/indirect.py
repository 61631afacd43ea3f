"""What a command runs through a program that is not a plain wrapper: `script -c`,
`flock … -c`, sed's `e`, git aliases; and the values the shell would give a
`${…}` expansion or a `$(…)` whose result is knowable (`mktemp`, the repository's top,
`find DIR …`). One place, shared by the refused-command check and the deny rules."""

from __future__ import annotations

import os
import re

from coder_ls.guard.shellparse.words import option_value

# The name `$(mktemp …)` stands for: a fresh entry that did not exist before the line.
MKTEMP_NAME = "tmp.mktemp-XXXXXXXXXX"
# Variables bash computes for itself: never "unset", never known.
DYNAMIC = frozenset(
    "RANDOM SRANDOM SECONDS LINENO BASHPID PPID EPOCHSECONDS EPOCHREALTIME BASH_COMMAND FUNCNAME "
    "BASH_SOURCE BASH_LINENO PIPESTATUS DIRSTACK GROUPS HISTCMD COMP_WORDS _".split()
)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
UNSET = object()  # a variable the shell is known not to hold
_NOT_SHELLS = frozenset("ssh autossh mosh sshpass push flush hash refresh crash splash wash finish publish".split())
_FIND_TESTS = ("-name", "-iname", "-path", "-ipath", "-regex", "-type", "-newer", "-mtime", "-mmin", "-empty", "-size")
# what a `find` may hold for its output to be paths beneath its start, as it found them
# (no -printf, -exec, -L: those print or reach anything)
_FIND_PLAIN = frozenset(
    (*_FIND_TESTS, "-maxdepth", "-mindepth", "-print", "-print0", "-not", "!", "-o", "-a", "-or", "-and", "(", ")")
)
_FIND_VALUED = frozenset(
    (
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-regex",
        "-type",
        "-newer",
        "-mtime",
        "-mmin",
        "-size",
        "-maxdepth",
        "-mindepth",
    )
)
# git's own commands: an alias never shadows one; any other name may be an alias or a
# `git-NAME` program, which runs what it likes
GIT_BUILTINS = frozenset(
    "add am annotate apply archive bisect blame branch bundle cat-file check-attr check-ignore check-mailmap "
    "check-ref-format checkout checkout-index cherry cherry-pick clean clone column commit commit-graph "
    "commit-tree config count-objects credential describe diff diff-files diff-index diff-tree difftool "
    "fetch fetch-pack filter-branch fmt-merge-msg for-each-ref for-each-repo format-patch fsck gc "
    "get-tar-commit-id grep hash-object help index-pack init interpret-trailers log ls-files ls-remote "
    "ls-tree mailinfo mailsplit maintenance merge merge-base merge-file merge-index merge-tree mktag mktree "
    "multi-pack-index mv name-rev notes pack-objects pack-redundant pack-refs patch-id prune prune-packed "
    "pull push range-diff read-tree rebase reflog remote repack replace request-pull rerere reset restore "
    "rev-list rev-parse revert rm send-email shortlog show show-branch show-index show-ref sparse-checkout "
    "stash status stripspace submodule switch symbolic-ref tag unpack-file unpack-objects update-index "
    "update-ref update-server-info var verify-commit verify-pack verify-tag version whatchanged worktree "
    "write-tree gui citool gitk instaweb lfs".split()
)


def is_shell(name: str, shells: frozenset[str]) -> bool:
    """`sh`, `bash`, … and any other `*sh` (`rbash`, `tcsh`, `yash`, `ksh93`) but `ssh`."""
    if name in shells:
        return True
    return bool(re.fullmatch(r"[a-z]{0,6}sh[0-9.]*", name)) and name not in _NOT_SHELLS


def lookup(env: dict[str, str | None], name: str, complete: bool) -> str | object | None:
    """A variable's value; UNSET when the environment is complete and lacks it; None when
    it cannot be known."""
    if name in env:
        return env[name]
    if not complete or name in DYNAMIC or not _NAME.fullmatch(name):
        return None
    return UNSET


def expand(op: str, value: str | object | None, arg: str | None) -> tuple[str | object | None, bool]:
    """`${x<op>arg}` given x's value: (the result, whether the expansion aborts the command)."""
    empty = value is UNSET or value == ""
    if op in (":?", "?"):
        if value is UNSET or (op == ":?" and value == ""):
            return None, True  # bash stops the command here: it never runs
        return value, False
    if op in (":-", "-", ":=", "="):
        if value is UNSET or (op[0] == ":" and empty):
            return arg, False
        return value, False
    if op in (":+", "+"):
        if value is None:
            return None, False
        return ("" if (value is UNSET or (op[0] == ":" and empty)) else arg), False
    if not isinstance(value, str):
        return (value if value is UNSET else None), False
    if op == ",,":
        return value.lower(), False
    if op == "^^":
        return value.upper(), False
    if op == ",":
        return value[:1].lower() + value[1:], False
    if op == "^":
        return value[:1].upper() + value[1:], False
    return None, False


def substituted(words: list[str | None], env: dict[str, str | None], root: str | None) -> str | None:
    """What `$(WORDS)` prints, when that is knowable from the command alone."""
    if not words or words[0] is None:
        return None
    name = os.path.basename(words[0])
    args = words[1:]
    if name == "pwd" and not args:
        return env.get("PWD")
    if name == "mktemp" and None not in args:
        known = [a for a in args if a is not None]
        where = option_value(words, ("-p", "--tmpdir"))
        template = next((a for a in known if not a.startswith("-") and a != where), None)
        if where is None and (template is None or "-t" in known or "--tmpdir" in known):
            where = env.get("TMPDIR") or "/tmp"
        if template is not None and where is None:
            return os.path.join(os.path.dirname(template), MKTEMP_NAME)
        return os.path.join(where or "/tmp", MKTEMP_NAME)
    if name == "git" and args[:1] == ["rev-parse"] and "--show-toplevel" in args and root is not None:
        if "GIT_WORK_TREE" in env or "GIT_DIR" in env:
            return env.get("GIT_WORK_TREE")
        pwd = env.get("PWD")
        inside = pwd is not None and (pwd == root or pwd.startswith(root.rstrip("/") + "/"))
        return root if inside else None
    if name == "find" and None not in args and args and any(a in _FIND_TESTS for a in args):
        start, rest = args[0], [a for a in args[1:] if a is not None]
        if start is None or start == "" or start.startswith(("-", "(", "!")):
            return None
        plain, expect_value = True, False
        for a in rest:
            if expect_value:
                expect_value = False
            elif a in _FIND_PLAIN:
                expect_value = a in _FIND_VALUED
            else:
                plain = False
        return start.rstrip("/") + "/*" if plain else None  # paths beneath the start
    return None


def script_c(words: list[str | None]) -> str | bool | None:
    """The command `script [opts] -c CMD [file]` runs (None: not a literal; False: none)."""
    for i, w in enumerate(words[1:], 1):
        if w is None:
            return None
        if w in ("-c", "--command"):
            return words[i + 1] if i + 1 < len(words) else None
        if w.startswith("--command="):
            return w.partition("=")[2]
        if re.fullmatch(r"-[a-zA-Z]*c", w):
            return words[i + 1] if i + 1 < len(words) else None
    return False


def sed_runs(words: list[str | None]) -> list[str | None]:
    """The commands sed's `e` runs: the text of `e CMD`, None for `e` alone or the `s///e`
    flag (the pattern space, text we cannot see). `-f FILE` scripts are not read."""
    scripts: list[str | None] = []
    args = words[1:]
    explicit = False
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-e", "--expression", "-f", "--file"):
            explicit = True
            scripts.append(args[i + 1] if i + 1 < len(args) and a in ("-e", "--expression") else None)
            i += 2
            continue
        if a is not None and a.startswith("--expression="):
            explicit = True
            scripts.append(a.partition("=")[2])
        elif a is not None and re.fullmatch(r"-[nrEsuzi]*e.+", a):
            explicit = True
            scripts.append(a[a.index("e") + 1 :])
        elif not explicit and (a is None or not a.startswith("-")):
            scripts.append(a)
            break
        i += 1
    runs: list[str | None] = []
    for script in scripts:
        if script is None:
            continue  # a file or an unknown script: sed itself is the program the rules see
        runs.extend(_sed_e(script))
    return runs


_SED_ADDR = re.compile(
    r"\s*(\d+|\$|/(?:[^/\\]|\\.)*/[IM]*|\\(.)(?:(?!\2).)*\2)?"  # an address
    r"(\s*,\s*(\d+|\$|/(?:[^/\\]|\\.)*/))?\s*!?\s*"  # a second one, negation
)


def _sed_e(script: str) -> list[str | None]:
    runs: list[str | None] = []
    pos = 0
    while pos < len(script):
        m = _SED_ADDR.match(script, pos)
        pos = m.end() if m else pos
        if pos >= len(script):
            break
        c = script[pos]
        if c == "e":
            end = script.find("\n", pos)
            text = script[pos + 1 : end if end >= 0 else len(script)].strip()
            runs.append(text or None)
            pos = len(script) if end < 0 else end + 1
            continue
        if c in "sy" and pos + 1 < len(script):
            delim = script[pos + 1]
            k, parts = pos + 2, 0
            while k < len(script) and parts < 2:
                if script[k] == "\\":
                    k += 2
                    continue
                if script[k] == delim:
                    parts += 1
                k += 1
            flags = re.match(r"[^;\n}]*", script[k:])
            if c == "s" and flags and "e" in flags.group(0).split("w")[0]:
                runs.append(None)
            pos = k + (flags.end() if flags else 0)
        elif c in "aicrRwW:bt#T":
            end = script.find("\n", pos)
            pos = len(script) if end < 0 else end + 1
            continue
        pos += 1
        while pos < len(script) and script[pos] in "; \t\n}{":
            pos += 1
    return runs


def git_subcommand(words: list[str | None]) -> str | None:
    """The command of `git [global options] COMMAND …` ("" for none; None: not a literal)."""
    i = 1
    while i < len(words):
        w = words[i]
        if w is None:
            return None
        if w in ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"):
            i += 2
            continue
        if not w.startswith("-"):
            return w
        i += 1
    return ""


def git_alias(words: list[str | None], aliases: dict[str, str | None]) -> tuple[str | None, list[str | None]] | None:
    """For `git [-c alias.x=V] … x ARGS`: (V, ARGS), V None when unknown. `-c alias.*`
    values join `aliases` (so does `git config alias.x V` in the line). None: no alias."""
    i, local = 1, dict(aliases)
    while i < len(words):
        w = words[i]
        if w is None:
            return None
        if w == "-c" and i + 1 < len(words):
            value = words[i + 1]
            if value is None:
                return None
            key, _, val = value.partition("=")
            if key.lower().startswith("alias."):
                local[key[6:].lower()] = val
            i += 2
            continue
        if w in ("-C", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env", "--super-prefix"):
            i += 2
            continue
        if w.startswith("-"):
            i += 1
            continue
        break
    if i >= len(words):
        return None
    sub = words[i]
    if sub == "config":
        rest = [a for a in words[i + 1 :] if a is None or not a.startswith("-")]
        if len(rest) >= 2 and rest[0] is not None and rest[0].lower().startswith("alias."):
            aliases[rest[0][6:].lower()] = rest[1]
        return None
    if sub is None or sub.lower() not in local or sub in GIT_BUILTINS:
        return None
    return local[sub.lower()], list(words[i + 1 :])


_CODE_STRING = re.compile(r"'([^'\\]*)'|\"([^\"\\]*)\"|\bqq?\s*\(([^()]*)\)")


def is_interpreter(name: str, interpreters: frozenset[str]) -> bool:
    return name in interpreters or name.startswith(("python", "pypy", "ruby", "perl", "node", "php"))


def code_strings(code: str) -> list[str]:
    """The quoted strings in code given to an interpreter (`os.system("rm …")`,
    `["rm", "x"]`, perl's `qq(…)`): the commands it may hand to a shell or exec."""
    return [next(g for g in m.groups() if g is not None) for m in _CODE_STRING.finditer(code)]


def loop_value(words: list[str | None]) -> str | None:
    """What `for x in WORDS` leaves in x, for the check: the one word, or a glob beneath the
    folder all of them share (`build dist` → `./*`, `/tmp/a /tmp/b` → `/tmp/*`); None when
    a word is unknown or they share no folder that can be named (`..`, `~`, `$…`)."""
    if not words or any(w is None for w in words):
        return None
    known = [w for w in words if w is not None]
    if len(known) == 1:
        return known[0]
    if any(w.startswith(("~", "-")) or ".." in w.split("/") for w in known):
        return None
    absolute = {w.startswith("/") for w in known}
    if len(absolute) != 1:
        return None
    try:
        common = os.path.commonpath([os.path.normpath(w) for w in known])
    except ValueError:
        return None
    return (common.rstrip("/") if common not in ("", ".") else ".") + "/*"
