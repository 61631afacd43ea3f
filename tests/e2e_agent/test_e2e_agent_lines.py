"""Issue 31's second corpus: shell lines other agents ran in real repositories
(tests/corpus/agent_lines/, README there: OpenHands on ponyc, mini-swe-agent on
marshmallow), run through the real server under the defaults over a real LSP client, one
line per turn, each source instance in a fresh git repository and a fresh server.

Nothing here was chosen or labelled by hand. Every line of a source is kept; the class of
each comes from the rules of `classify` below, applied to the line as it will run:

- **needs network**: a package install or update (`pip`/`pip3`/`npm`/`yarn`/`pnpm`/`apt`/
  `apt-get`/`gem`/`cargo`/`go` with `install`, `update`, `upgrade`, `add`, `get`,
  `download`), `curl`, `wget`, `git clone|fetch|pull|push|ls-remote|submodule`. Not run:
  the sandbox has no network by default and this test has none to give;
- **writes outside**: a write target outside the workspace (redirection `>`/`>>`, `tee`,
  `sed -i`, `cp`/`mv`/`ln`/`install` destinations, `rm`/`mkdir`/`touch`/`rmdir`/`chmod`/
  `truncate` arguments, or a program of unknown effect run in a folder outside it);
  `/dev/*` and `/tmp` (the sandbox's own) are neither inside nor outside;
- **runs tests**: a test runner (`pytest`, `python -m pytest|unittest`, `tox`, `nox`,
  `make test|check`, `npm test`, `go test`, `cargo test`);
- **writes inside**: any other write, and any program that is not a known reader (a
  script, `make`, a compiler: its effect is unknown, so it counts as a write where it runs);
- **reader**: every command a known reader (`ls`, `cat`, `head`, `grep`, `find` without
  `-exec`/`-delete`/`-fprint`/`-ok`, `sed` without `-i`, `git status|diff|log|show|...`, …)
  and no redirection that writes.
A line takes the first of these classes any of its commands has, in that order. `cd` is
followed from line to line (the agent's shell is persistent, as OpenHands' is).

How a transcript's paths meet this machine: the source's `container` prefix (`/workspace`,
`/testbed`) is replaced by a folder of this test's (under /var/tmp: the sandbox gives
itself a private /tmp), so the transcript's repository is the workspace at the same
relative place, and `/workspace/test.c` lands outside it as it did there. The repository
is generated (no code of those projects is stored): every relative path with a `/` that a
line names and does not create is made, a file (1,200 comment lines) when its name has an
extension, else a folder; top-level names are not made (making one would turn a line's
creation at the workspace's top into a mere overwrite).

Counted per line: questions (a permission question answered "Allow once", or an offer to
run outside the sandbox, declined), and walls hit (that offer, or the sandbox's refusal in
the output: "Read-only file system", "Operation not permitted", "Device or resource busy").

The bar after issue 31 (contract section 20): readers never ask; of the lines that write
inside or run tests, at least 24 in 26 (the issue's own ratio) run with no question and no
wall; and nothing lands outside the workspace (every offer to run outside is declined).

    cd <tree> && PYTHONPATH=$PWD python -m pytest -q -s -p no:cacheprovider -n 0 \
        tests/e2e_agent/test_e2e_agent_lines.py
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from agent_e2e import api_env
from anthropic_server import FakeAnthropicServer
from harness import init_git, lsp_session
from test_e2e_everyday_shell import answer_allow_once, one_turn, outside_offer

from coder_ls.guard import sandbox

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
    pytest.mark.skipif(sandbox.bwrap_path() is None, reason="bubblewrap does not work on this machine"),
    pytest.mark.timeout(900),
]

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "agent_lines"
CLASSES = ("reader", "writes inside", "runs tests", "writes outside", "needs network")
SHOWN = 40  # lines listed of those that asked or hit a wall
WALL_TEXTS = ("Read-only file system", "Operation not permitted", "Device or resource busy")

# -- the rules ------------------------------------------------------------------------------

READERS = {
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "find", "sed", "awk", "sort", "uniq",
    "cut", "tr", "diff", "cmp", "file", "stat", "pwd", "echo", "printf", "which", "type", "true", "false",
    "test", "[", "realpath", "dirname", "basename", "nl", "less", "more", "tree", "du", "df", "ps", "xargs",
    "apt-cache", "cd", "export", "env", "date", "whoami", "uname", "id", "hostname", "command",
}  # fmt: skip
GIT_READERS = {
    "status", "diff", "log", "show", "blame", "rev-parse", "ls-files", "grep", "describe", "shortlog",
    "config", "remote", "worktree", "stash", "branch", "tag",
}  # fmt: skip
# `git config|remote|worktree|stash|branch|tag` read only in their listing forms (no arguments
# beyond options); with arguments they write
GIT_LISTING_ONLY = {"config", "remote", "worktree", "stash", "branch", "tag"}
NET_PROGRAMS = {"pip", "pip3", "npm", "yarn", "pnpm", "apt", "apt-get", "gem", "cargo", "go", "brew", "uv"}
NET_VERBS = {"install", "update", "upgrade", "add", "get", "download"}
GIT_NET = {"clone", "fetch", "pull", "push", "ls-remote", "submodule"}
FIND_WRITES = ("-exec", "-execdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls", "-ok", "-okdir")
TARGET_ALL = {"rm", "mkdir", "touch", "rmdir", "chmod", "chown", "truncate"}  # every argument is written
TARGET_LAST = {"cp", "ln", "install"}  # the last argument is written
REDIRECT = re.compile(r"^(\d*|&)(>>?|>\|)(.*)$")
HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")


def strip_heredocs(line: str) -> str:
    """The line without its here-document bodies (data, not commands)."""
    out, lines, i = [], line.split("\n"), 0
    while i < len(lines):
        out.append(lines[i])
        ends = [m.group(2) for m in HEREDOC.finditer(lines[i])]
        i += 1
        for end in ends:
            while i < len(lines) and lines[i].strip() != end:
                i += 1
            i += 1
    return "\n".join(out)


def simple_commands(line: str) -> Iterator[list[str]]:
    """The words of each simple command (split at unquoted `;` `&&` `||` `|` `&` newline)."""
    text, parts, buf, quote, i = strip_heredocs(line), [], [], "", 0
    while i < len(text):
        c = text[i]
        if quote:
            buf.append(c)
            if c == quote:
                quote = ""
            elif c == "\\" and quote == '"' and i + 1 < len(text):
                buf.append(text[i + 1])
                i += 1
        elif c in "'\"":
            quote = c
            buf.append(c)
        elif c == "\\" and i + 1 < len(text):
            buf.extend(text[i : i + 2])
            i += 1
        elif c in ";\n" or (c in "&|" and not (c == "&" and buf and buf[-1] in "<>")):
            parts.append("".join(buf))
            buf = []
            if c in "&|" and text[i + 1 : i + 2] == c:
                i += 1
        else:
            buf.append(c)
        i += 1
    parts.append("".join(buf))
    for part in parts:
        try:
            words = shlex.split(part)
        except ValueError:
            words = part.split()
        if words:
            yield words


@dataclass
class Classified:
    kind: str
    writes: list[str] = field(default_factory=list)  # resolved write targets
    reads: list[str] = field(default_factory=list)  # resolved paths named and not created
    creates: list[str] = field(default_factory=list)


def _resolve(word: str, cwd: str) -> str:
    return os.path.normpath(word if word.startswith("/") else os.path.join(cwd, word))


def _program(words: list[str]) -> tuple[str, list[str]]:
    i = 0
    while i < len(words) and re.match(r"^\w+=", words[i]):  # VAR=value prefixes
        i += 1
    rest = words[i:]
    return (os.path.basename(rest[0]) if rest else "", rest[1:])


def classify(line: str, cwd: str, root: str) -> tuple[Classified, str]:
    """The line's class by the rules of the module docstring, and the cwd after it."""
    found: set[str] = set()
    c = Classified("reader")
    for words in simple_commands(line):
        prog, args = _program(words)
        if prog == "xargs":  # the command xargs runs, with its arguments
            prog, args = _program([w for w in args if not w.startswith("-")])
        plain, skip = [], False
        for n, w in enumerate(args):  # redirections out, their targets noted
            if skip:
                skip = False
                continue
            m = REDIRECT.match(w)
            if not m:
                plain.append(w)
                continue
            target = m.group(3)
            if not target:
                target, skip = (args[n + 1] if n + 1 < len(args) else ""), True
            if target and not target.startswith(("&", "/dev/")):
                c.writes.append(_resolve(target, cwd))
                if m.group(2) != ">>":
                    c.creates.append(_resolve(target, cwd))
        operands = [w for w in plain if not w.startswith("-")]
        if prog == "cd":
            cwd = _resolve(operands[0], cwd) if operands else root
            continue
        if re.fullmatch(r"python(\d(\.\d+)?)?", prog):
            if plain[:2] in (["-m", "pip"],) and "install" in plain:
                found.add("needs network")
            elif plain[:2] in (["-m", "pytest"], ["-m", "unittest"], ["-m", "tox"]):
                found.add("runs tests")
            elif plain[:1] != ["--version"]:
                found.add("writes inside")
                c.writes.append(cwd)
        elif (prog in NET_PROGRAMS and NET_VERBS & set(plain)) or prog in ("curl", "wget"):
            found.add("needs network")
        elif prog == "git":
            sub = operands[0] if operands else ""
            if sub in GIT_NET:
                found.add("needs network")
            elif sub not in GIT_READERS or (sub in GIT_LISTING_ONLY and len(operands) > 1):
                found.add("writes inside")
                c.writes.append(root)
        elif prog in ("pytest", "tox", "nox") or (prog == "make" and {"test", "check"} & set(operands)):
            found.add("runs tests")
        elif prog in ("npm", "go", "cargo") and operands[:1] == ["test"]:
            found.add("runs tests")
        elif prog == "sed" and any(w.startswith("-i") or w == "--in-place" for w in plain):
            c.writes += [_resolve(w, cwd) for w in operands[1:]]
        elif prog == "tee":
            c.writes += [_resolve(w, cwd) for w in operands]
        elif prog == "find" and any(w in FIND_WRITES for w in plain):
            found.add("writes inside")
            c.writes.append(cwd)
        elif prog in TARGET_ALL:
            c.writes += [_resolve(w, cwd) for w in operands]
            if prog in ("mkdir", "touch"):
                c.creates += [_resolve(w, cwd) for w in operands]
        elif prog == "mv":
            c.writes += [_resolve(w, cwd) for w in operands]
            c.creates += [_resolve(w, cwd) for w in operands[-1:]]
        elif prog in TARGET_LAST:
            c.writes += [_resolve(w, cwd) for w in operands[-1:]]
            c.creates += [_resolve(w, cwd) for w in operands[-1:]]
        elif prog not in READERS:
            found.add("writes inside")  # a program of unknown effect writes where it runs
            c.writes.append(cwd)
        c.reads += [_resolve(w, cwd) for w in operands if re.fullmatch(r"[\w./-]*/[\w./-]*", w)]
    for target in c.writes:
        scratch = target.startswith(("/dev/", "/tmp/")) or target == "/tmp"
        if not scratch:
            inside = target == root or target.startswith(root + "/")
            found.add("writes inside" if inside else "writes outside")
    for kind in ("needs network", "writes outside", "runs tests", "writes inside"):
        if kind in found:
            c.kind = kind
            break
    return c, cwd


# -- the repository the lines run in ---------------------------------------------------------


@dataclass
class Source:
    name: str
    source: dict[str, str]
    container: str
    workspace: str
    instances: dict[str, list[str]]


def sources() -> list[Source]:
    out = []
    for path in sorted(CORPUS.glob("*.json")):
        doc = json.loads(path.read_text())
        instances: dict[str, list[str]] = {}
        for entry in doc["lines"]:
            instances.setdefault(entry["instance"], []).append(entry["line"])
        out.append(Source(path.stem, doc["source"], doc["container"], doc["workspace"], instances))
    return out


def mapped(line: str, container: str, here: Path) -> str:
    """The line with the transcript's container folder replaced by this test's."""
    return re.sub(rf"(?<![\w/]){re.escape(container)}(?=/|\b|$)", str(here), line)


def make_repository(root: Path, lines: list[str]) -> None:
    """The stand-in repository: the paths the lines name (module docstring), committed."""
    root.mkdir(parents=True)
    created: set[str] = set()
    named: set[str] = set()
    cwd = str(root)
    for line in lines:
        c, cwd = classify(line, cwd, str(root))
        created.update(c.creates)
        named.update(c.reads + [w for w in c.writes if w not in c.creates])
    for path in sorted(named - created):
        rel = os.path.relpath(path, root)
        top = rel.split("/")[0]
        if top in ("..", ".git") or "/" not in rel or any(ch in rel for ch in "*?$[]{}="):
            continue
        target = root / rel
        if re.search(r"\.\w{1,5}$", rel):
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                target.write_text("".join(f"# line {n} of a stand-in for {rel}\n" for n in range(1, 1201)))
        else:
            target.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text("# a stand-in repository\n")
    init_git(root, {})
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "stand-in"], check=True, env=env)
    subprocess.run(["git", "-C", str(root), "config", "user.name", "Agent User"], check=True)
    subprocess.run(["git", "-C", str(root), "config", "user.email", "user@example.invalid"], check=True)


def listing(folder: Path, skip: Path) -> set[str]:
    """Every path under `folder` but the workspace `skip` and the server's own folders
    (`harness.server_env`'s `.xdg-*` beside the workspace)."""
    out = set()
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if Path(dirpath, d) != skip and not d.startswith(".xdg-")]
        out.update(os.path.join(dirpath, n) for n in dirnames + filenames)
    return out


# -- the run --------------------------------------------------------------------------------


@dataclass
class Row:
    source: str
    line: str
    kind: str
    ran: bool = False
    questions: int = 0
    walls: int = 0
    wall: str = ""  # the output's line naming the wall, if any


def _counts(label: str, rows: list[Row]) -> str:
    ran = [r for r in rows if r.ran]
    unasked, asked = sum(r.questions == 0 for r in ran), sum(r.questions > 0 for r in ran)
    questions, walls = sum(r.questions for r in ran), sum(r.walls > 0 for r in ran)
    return f"{label:15} {len(rows):>5} {len(ran):>4} {unasked:>8} {asked:>6} {questions:>10} {walls:>10}"


def print_table(rows: list[Row]) -> None:
    print("\nSecond corpus: lines other agents ran, under the defaults (one per turn)")
    print(f"{'class':15} {'lines':>5} {'run':>4} {'unasked':>8} {'asked':>6} {'questions':>10} {'walls hit':>10}")
    for kind in CLASSES:
        print(_counts(kind, [r for r in rows if r.kind == kind]))
    print(_counts("all", rows))
    stopped = [r for r in rows if r.ran and r.kind != "writes outside" and (r.questions or r.walls)]
    stopped.sort(key=lambda r: -r.walls)  # the walls first
    print(f"lines not writing outside that asked or hit a wall: {len(stopped)} (the first {SHOWN}, walls first)")
    for r in stopped[:SHOWN]:
        short = r.line.replace("\n", "⏎")[:110]
        print(f"  [{r.kind}] {r.questions}q {r.walls}w  {short}")
        if r.wall:
            print(f"      wall: {r.wall}")


async def test_lines_other_agents_ran_run_unasked_in_the_sandbox():
    rows: list[Row] = []
    landed_outside: list[str] = []
    for src in sources():
        for instance, lines in src.instances.items():
            base = Path(tempfile.mkdtemp(prefix="coder-agent-lines-", dir="/var/tmp"))
            try:
                here = base / src.container.strip("/").replace("/", "_")
                root = Path(mapped(src.workspace, src.container, here))
                runnable = [mapped(line, src.container, here) for line in lines]
                make_repository(root, runnable)
                before = listing(base, root)
                with FakeAnthropicServer() as fake:
                    async with lsp_session(root, env=api_env(fake)) as s:  # the defaults
                        s.answer_question = answer_allow_once
                        cwd = str(root)
                        for original, line in zip(lines, runnable, strict=True):
                            c, cwd = classify(line, cwd, str(root))
                            row = Row(f"{src.name}:{instance}", original, c.kind)
                            rows.append(row)
                            if c.kind == "needs network":
                                continue
                            s.questions.clear()
                            (out,) = await one_turn(s, fake, line)
                            row.ran = True
                            row.questions = len(s.questions)
                            hit = [x for x in out.splitlines() if any(t in x for t in WALL_TEXTS)]
                            row.walls = int(any(map(outside_offer, s.questions)) or bool(hit))
                            row.wall = hit[0].strip()[:100] if hit else ""
                landed_outside += sorted(listing(base, root) - before)
            finally:
                shutil.rmtree(base, ignore_errors=True)
    print_table(rows)
    assert len(rows) >= 60
    assert not landed_outside, f"written outside the workspace: {landed_outside[:5]}"
    readers = [r for r in rows if r.kind == "reader" and r.ran]
    assert all(r.questions == 0 for r in readers), f"{sum(r.questions > 0 for r in readers)} readers asked"
    inside = [r for r in rows if r.kind in ("writes inside", "runs tests") and r.ran]
    clean = sum(r.questions == 0 and r.walls == 0 for r in inside)
    assert clean * 26 >= 24 * len(inside), f"{clean} of {len(inside)} inside lines ran unasked and unwalled"
