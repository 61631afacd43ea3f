"""What a grant or an allow rule for a shell command covers: exactly what the user
approved, and no more.

"Allow for session" and "Always allow" keep a prefix of the command's words
(`command_prefix`): the program as written with, for the multi-word tools, their global
options and subcommand (`git --no-pager log`, `git -C x status`, `npm run build`), or the
exact command when a prefix would cover more than the user saw: interpreters, shells,
wrappers and destructive tools (`python3.11 -V`), a multi-word tool with no subcommand
(`npm --version`) or one whose subcommand runs any command (`npm exec`, `uv run`). A line
with a here-document, or a script given to an interpreter on its input, is never granted:
its script is not in its words. A rule matches the program by the exact word or by the
same file on PATH, never by basename (`tools/git status` is not `git status`).
"""

from __future__ import annotations

import os
import re
import shutil

from coder_ls.guard.shellparse import Command, parse

# Commands whose second word (the subcommand) belongs in a granted prefix.
MULTI_WORD = frozenset(
    "git npm pnpm yarn bun npx pnpx bunx uvx pipx cargo go docker kubectl pip pip3 poetry uv make dotnet gradle "
    "mvn deno rustup brew apt apt-get".split()
)
# Programs that run arbitrary code or act on whatever follows them: a grant or rule for
# them covers only the exact command it names, never a prefix.
EXACT_PROGRAMS = frozenset(
    "python python2 python3 pypy pypy3 node nodejs ruby perl php lua deno bun awk gawk mawk nawk "
    "bash sh zsh dash ksh fish busybox env timeout xargs find sudo doas su nice nohup setsid stdbuf time "
    "exec command builtin eval watch coproc chroot flock ionice chrt taskset strace ltrace source . "
    "rm rmdir unlink shred dd truncate chmod chown chgrp mv kill pkill ssh scp rsync curl wget sed".split()
)
# Flags that hand code to a program: never covered by a prefix.
CODE_FLAGS = frozenset({"-c", "-e", "--eval", "--command", "-exec", "-execdir", "-ok", "--exec"})
# Interpreters and shells under any versioned name (`python3.11`, `node18`, `perl5.36`,
# `pypy3.10`, `ruby3.2`): exact commands only, like EXACT_PROGRAMS.
INTERPRETER_NAME = re.compile(
    r"(python|pypy|node|nodejs|ruby|irb|perl|php|lua|luajit|tclsh|wish|Rscript|julia|ipython|deno|bun|"
    r"awk|gawk|mawk|nawk|osascript|jshell|pwsh|bash|sh|zsh|dash|ksh|mksh|ash|fish|tcsh|csh|busybox)[0-9.\-]*"
)
# Options a multi-word tool takes before its subcommand: (flags, options taking a value).
# They are part of the command a grant keeps (`git -C dir log`, `git --no-pager log`); an
# option not listed here makes the grant the exact command.
GLOBAL_OPTIONS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "git": (
        frozenset(
            "--no-pager -P --paginate -p --bare --no-replace-objects --literal-pathspecs --glob-pathspecs "
            "--noglob-pathspecs --icase-pathspecs --no-optional-locks --no-advice --no-lazy-fetch".split()
        ),
        frozenset("-C -c --git-dir --work-tree --namespace --config-env --super-prefix".split()),
    ),
    "docker": (frozenset("-D --debug --tls --tlsverify".split()), frozenset("-H --host --context -c --config".split())),
    "kubectl": (frozenset(), frozenset("-n --namespace --context --kubeconfig --cluster --user -s --server".split())),
    "make": (frozenset("-k -s --silent -B".split()), frozenset("-C -f --file --directory".split())),
    "npm": (frozenset("-s --silent".split()), frozenset("--prefix -w --workspace".split())),
    "pnpm": (frozenset("-s --silent -r --recursive".split()), frozenset("-C --dir --filter".split())),
    "yarn": (frozenset("-s --silent".split()), frozenset("--cwd".split())),
}
# Subcommands that run whatever command follows them: a grant keeps the exact command.
RUNS_ANY: dict[str, frozenset[str]] = {
    "npm": frozenset({"exec", "x"}),
    "pnpm": frozenset({"exec", "dlx"}),
    "yarn": frozenset({"exec", "dlx"}),
    "uv": frozenset({"run", "tool"}),
    "poetry": frozenset({"run"}),
    "docker": frozenset({"run", "exec"}),
    "kubectl": frozenset({"exec", "run", "debug"}),
    "go": frozenset({"run"}),
    "dotnet": frozenset({"exec"}),
    "pipx": frozenset({"run"}),
}
# Subcommands whose next word names the script they run: that word is kept too.
RUNS_SCRIPT: dict[str, frozenset[str]] = {
    "npm": frozenset({"run", "run-script"}),
    "pnpm": frozenset({"run"}),
    "yarn": frozenset({"run"}),
}
# Here-documents and here-strings: their text is not part of a command's words.
SCRIPT_REDIRECTS = frozenset({"<<", "<<-", "<<<"})


def program_name(word: str | None) -> str | None:
    """The basename of a program word (`/bin/rm` -> `rm`): how deny rules catch a program
    and how a program's kind is told; never how an allow rule matches it (`_same_program`)."""
    return None if word is None else os.path.basename(word) or word


def exact_program(word: str) -> bool:
    """Interpreters, shells, wrappers and destructive tools: only exact commands are granted."""
    name = program_name(word) or word
    return name in EXACT_PROGRAMS or INTERPRETER_NAME.fullmatch(name) is not None


def skip_assignments(words: tuple[str | None, ...]) -> int:
    i = 0
    while i < len(words) and words[i] is not None and "=" in str(words[i]) and not str(words[i]).startswith("="):
        i += 1
    return i


def subcommand_end(words: tuple[str, ...], i: int) -> int | None:
    """For the multi-word tool at `words[i]`: the index just after its subcommand, with the
    global options before it (and their values) and, for `npm run`-like subcommands, the
    script's name. None when the exact command must be kept: no subcommand (`npm
    --version`), an option not in GLOBAL_OPTIONS, or a subcommand that runs any command
    (`npm exec`, `uv run`, `docker run`)."""
    program = program_name(words[i]) or words[i]
    flags, valued = GLOBAL_OPTIONS.get(program, (frozenset(), frozenset()))
    j = i + 1
    while j < len(words):
        word = words[j]
        if program in ("cargo", "rustup") and word.startswith("+"):  # `cargo +nightly build`
            j += 1
        elif not word.startswith("-") or word == "-":
            break
        elif word in flags:
            j += 1
        elif word in valued:
            j += 2
        elif word.split("=", 1)[0] in valued or (word[:2] in valued and not word.startswith("--")):
            j += 1  # `--git-dir=x`, `-Cdir`, `-ccore.pager=cat`
        else:
            return None
    if j >= len(words):
        return None
    sub = words[j]
    if sub in RUNS_ANY.get(program, ()):
        return None
    if sub in RUNS_SCRIPT.get(program, ()):
        if j + 1 >= len(words) or words[j + 1].startswith("-"):
            return None
        return j + 2
    return j + 1


def prefix_end(words: tuple[str, ...]) -> int | None:
    """How many of `words` (a literal command) a grant keeps; None for the exact command."""
    i = skip_assignments(words)
    if i >= len(words) or exact_program(words[i]) or any(w in CODE_FLAGS for w in words[i + 1 :]):
        return None
    if (program_name(words[i]) or "") in MULTI_WORD:
        return subcommand_end(words, i)
    return i + 1


def command_prefix(words: tuple[str, ...] | list[str]) -> list[str]:
    """The words a grant or "Always allow" keeps, covering what the user saw and no more:
    leading `VAR=x`, the program as written, and for the multi-word tools (`git`, `npm`,
    `cargo`, ...) their global options and subcommand (`git --no-pager log`, `git -C x
    status`, `npm run build`); the exact command for interpreters, shells, wrappers and
    destructive tools, for a multi-word tool with no subcommand (`npm --version`) or one
    that runs any command (`npm exec`), and for a command given a `-c`/`-e` script."""
    literal = tuple(words)
    end = prefix_end(literal)
    return list(literal if end is None else literal[:end])


def rule_words(text: str) -> tuple[str, ...] | None:
    line = parse(text)
    if not line.parsed or len(line.commands) != 1 or None in line.commands[0].written:
        return None
    return tuple(str(w) for w in line.commands[0].written)


def on_path(word: str) -> str | None:
    """Where the program `word` is: an absolute word as is, a bare name looked up on PATH,
    with the folder resolved but not the file (a multi-call binary's links stay apart:
    `/bin/ls` and `/bin/rm` may both lead to busybox). None for a relative path."""
    if "/" in word:
        if not word.startswith("/"):
            return None
        found: str | None = word
    else:
        found = shutil.which(word)
    if found is None:
        return None
    head, name = os.path.split(os.path.normpath(found))
    return os.path.join(os.path.realpath(head), name)


def same_program(rule_word: str, word: str) -> bool:
    """A rule's program matches a command's by the exact word, or when both name the same
    file on PATH (`git` and `/usr/bin/git`); never by basename (`tools/git` is not `git`)."""
    if rule_word == word:
        return True
    if "/" not in rule_word and "/" not in word:
        return False  # two different bare names
    ours, theirs = on_path(rule_word), on_path(word)
    return ours is not None and ours == theirs


def exact_rule(prefix: tuple[str, ...], k: int) -> bool:
    """A rule that covers only the exact command it names: an interpreter, shell, wrapper or
    destructive tool, or a multi-word tool's options with no subcommand (`npm --version`,
    what "Always allow" stores for such a command)."""
    if k >= len(prefix):
        return False
    if exact_program(prefix[k]):
        return True
    return (program_name(prefix[k]) or "") in MULTI_WORD and len(prefix) > k + 1 and subcommand_end(prefix, k) is None


def prefix_covers(prefix: tuple[str, ...], words: tuple[str | None, ...]) -> bool:
    """An allow/ask rule or grant for `prefix` covers the command `words` (as written)."""
    if not prefix or None in words or len(words) < len(prefix):
        return False
    head = words[: len(prefix)]
    k = skip_assignments(prefix)
    if head[:k] != prefix[:k] or head[k + 1 :] != prefix[k + 1 :]:
        return False
    if k < len(prefix) and not same_program(prefix[k], str(head[k])):
        return False
    if exact_rule(prefix, k):
        return len(words) == len(prefix)
    return not any(w in CODE_FLAGS for w in words[len(prefix) :])


def feeds_script(cmd: Command) -> bool:
    """A here-document or here-string (text a rule cannot name), or any standard input
    given to an interpreter or shell (`python3 - <<EOF`, `curl … | node`, `perl < x.pl`)."""
    if any(r.op in SCRIPT_REDIRECTS for r in cmd.redirects):
        return True
    start = skip_assignments(cmd.written)
    first = cmd.written[start] if start < len(cmd.written) else None
    if first is None or not exact_program(first):
        return False
    return cmd.stdin != "" or bool(cmd.stdin_from) or any(r.op == "<" for r in cmd.redirects)


def covers(prefix: tuple[str, ...], cmd: Command) -> bool:
    """An allow rule or grant for `prefix` covers `cmd`: its words are covered, and it is
    not an interpreter or shell reading a script from its input."""
    if not prefix:
        return True
    k = skip_assignments(prefix)
    if k < len(prefix) and exact_program(prefix[k]) and feeds_script(cmd):
        return False
    return prefix_covers(prefix, cmd.written)


def grant_words(cmd: Command) -> list[str] | None:
    """The words a grant for `cmd` keeps (`command_prefix`), or None when no rule can name
    exactly what it runs: a here-document or a script fed to an interpreter
    (`feeds_script`), a word that is not a literal where the grant would need it (`git $X
    log`, `python3 "$f"`; `echo $((1+1))` keeps `echo`), or a multi-word tool alone (`git`,
    `make`), since a rule naming only the tool covers all its subcommands."""
    written = cmd.written
    if feeds_script(cmd):
        return None
    cut = next((n for n, w in enumerate(written) if w is None), len(written))
    literal = tuple(str(w) for w in written[:cut])
    end = prefix_end(literal)
    if cut < len(written):
        rest = [w for w in written[cut:] if w is not None]
        if end is None or any(w in CODE_FLAGS for w in rest):
            return None
    words = list(literal if end is None else literal[:end])
    k = skip_assignments(tuple(words))
    if not words[k:] or (len(words) == k + 1 and (program_name(words[k]) or "") in MULTI_WORD):
        return None
    return words
