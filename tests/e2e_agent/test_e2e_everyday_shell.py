"""Issue 31's acceptance, end to end: under the defaults (no `permissions` set, bubblewrap
available) the 26 everyday agent shell calls of the issue run in a small real git
repository, one per turn, over a real LSP client with the fake Anthropic endpoint; each is
counted (the questions the user was asked) and checked by its effect on disk or in git.

The "user" answers a permission question with "Allow once" and never lets a command run
outside the sandbox (it dismisses that offer): the offer is counted as a question and declined,
so the count shows what the sandbox alone achieves. A step whose effect is missing is then
done on the host (the same line, outside the server), so the next step starts where a
working agent would be and every row measures one command.

The bar (issue 31, contract section 20): at least 24 of the 26 run with no question and
their effect in place. Beside it, the walls: the protected names are never written, even
when the user allows every command and under `yolo`, and the sandbox is never offered to
be left for them; an "Always allow"ed write at the workspace's top runs; a line whose
redirect failed on a wall but whose last command succeeded is offered to run outside.

Each test prints its table; `pytest -s` (or a failure) shows it:

    cd <tree> && PYTHONPATH=$PWD python -m pytest -q -s -p no:cacheprovider -n 0 \
        tests/e2e_agent/test_e2e_everyday_shell.py
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from agent_e2e import api_env, calls, result_text, tool_call, tool_results
from anthropic_server import FakeAnthropicServer, reply
from harness import Session, init_git, lsp_session
from lsprotocol import types

from coder_ls.guard import sandbox

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
    pytest.mark.skipif(sandbox.bwrap_path() is None, reason="bubblewrap does not work on this machine"),
    pytest.mark.timeout(600),
]

# The bash tool's offer after a wall (coder_ls/agent/tools/bash.py: "Run outside the
# sandbox" / "Keep the failure"): known by an action that says "outside", so a reworded
# offer is still counted as one; declined by dismissing it (no answer is a no).

CALC = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
TEST_CALC = (
    "import unittest\n\nfrom calc import add, mul\n\n\n"
    "class CalcTest(unittest.TestCase):\n"
    "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n"
    "    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n"
)
MAKE_DATA = (
    "import json\n\nwith open('data.json', 'w') as f:\n"
    "    json.dump({'items': [1, 2, 3]}, f)\nprint('wrote data.json')\n"
)
FILES = {
    "README.md": "# demo\n\nA small project.\n",
    "calc.py": CALC,
    "test_calc.py": TEST_CALC,
    "tools/make_data.py": MAKE_DATA,
    "old_name.txt": "to be renamed\n",
    "scratch.txt": "to be removed\n",
    ".gitignore": "__pycache__/\nbuild/\n",
}
GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=GIT_ENV).stdout


def on_the_host(command: str, root: Path) -> None:
    """The line run by the harness itself, outside the server (where a working agent would be)."""
    subprocess.run(["bash", "-c", command], cwd=root, env=GIT_ENV, capture_output=True)


def workspace(path: Path) -> Path:
    """The small repository, with the identity git needs in its own config (as a user's
    repository has it: the sandbox reads it, never writes it)."""
    root = init_git(path, FILES)
    git(root, "config", "user.name", "Everyday User")
    git(root, "config", "user.email", "user@example.invalid")
    return root


def text(root: Path, rel: str) -> str | None:
    try:
        return (root / rel).read_text()
    except OSError:
        return None


# -- the 26 calls --------------------------------------------------------------------------

Check = Callable[[Path, str], bool]  # (workspace, the tool result the model saw) -> effect in place


@dataclass(frozen=True)
class Step:
    kind: str  # "write" (changes the workspace or git) or "read"
    command: str
    check: Check


def _data_json(root: Path, out: str) -> bool:
    try:
        return json.loads(text(root, "data.json") or "") == {"items": [1, 2, 3]}
    except ValueError:
        return False


def _pycache(root: Path, out: str) -> bool:
    return any(p.name.startswith("calc.") and p.suffix == ".pyc" for p in (root / "__pycache__").glob("*"))


def _exit_0(out: str) -> bool:
    return "[exit code: 0]" in out


EVERYDAY: list[Step] = [
    Step(
        "write",
        "sed -i 's/A small project/An everyday project/' README.md",
        lambda r, o: "An everyday project" in (text(r, "README.md") or ""),
    ),
    Step(
        "write",
        'echo "- run the tests before committing" > NOTES.md',
        lambda r, o: text(r, "NOTES.md") == "- run the tests before committing\n",
    ),
    Step("write", "mkdir build", lambda r, o: (r / "build").is_dir()),
    Step(
        "write",
        "mv old_name.txt new_name.txt",
        lambda r, o: text(r, "new_name.txt") == "to be renamed\n" and not (r / "old_name.txt").exists(),
    ),
    Step("write", "rm scratch.txt", lambda r, o: not (r / "scratch.txt").exists()),
    Step("write", "cp calc.py calc_backup.py", lambda r, o: text(r, "calc_backup.py") == CALC),
    Step("write", "python3 tools/make_data.py", _data_json),
    Step("write", "python3 -m compileall -q .", _pycache),
    Step(
        "write",
        "ln -s README.md docs.md",
        lambda r, o: (r / "docs.md").is_symlink() and os.readlink(r / "docs.md") == "README.md",
    ),
    Step(
        "write",
        "git add NOTES.md README.md",
        lambda r, o: set(git(r, "diff", "--cached", "--name-only").split()) == {"NOTES.md", "README.md"},
    ),
    Step("write", 'git commit -m "Add notes"', lambda r, o: git(r, "log", "-1", "--format=%s").strip() == "Add notes"),
    Step(
        "write",
        "git checkout -b feature/notes",
        lambda r, o: git(r, "branch", "--show-current").strip() == "feature/notes",
    ),
    Step("write", 'echo "# scratch change" >> calc.py', lambda r, o: text(r, "calc.py") == CALC + "# scratch change\n"),
    Step(
        "write",
        "git stash",
        lambda r, o: text(r, "calc.py") == CALC and len(git(r, "stash", "list").splitlines()) == 1,
    ),
    Step(
        "write",
        "git stash pop",
        lambda r, o: text(r, "calc.py") == CALC + "# scratch change\n" and git(r, "stash", "list") == "",
    ),
    # the silent loss: the redirect fails, `echo done` succeeds, the line exits 0
    Step("write", 'echo "all good" > REPORT.md; echo done', lambda r, o: text(r, "REPORT.md") == "all good\n"),
    Step("write", "touch CHANGELOG.md", lambda r, o: (r / "CHANGELOG.md").is_file()),
    Step("read", "ls -la", lambda r, o: _exit_0(o) and "README.md" in o and "calc.py" in o),
    Step("read", "cat calc.py | grep def", lambda r, o: _exit_0(o) and "def add(a, b):" in o and "def mul" in o),
    Step("read", "git status", lambda r, o: _exit_0(o) and "On branch feature/notes" in o),
    Step("read", "git diff", lambda r, o: _exit_0(o) and "+# scratch change" in o),
    Step("read", "git log --oneline -5", lambda r, o: _exit_0(o) and "Add notes" in o and "init" in o),
    Step("read", 'grep -rn "def mul" --include=*.py .', lambda r, o: _exit_0(o) and "./calc.py:5:def mul" in o),
    Step("read", 'find . -name "*.py" -not -path "./.git/*"', lambda r, o: _exit_0(o) and "./tools/make_data.py" in o),
    Step("read", "python3 -m unittest", lambda r, o: _exit_0(o) and "Ran 2 tests" in o and "OK" in o),
    Step("read", "git show --stat HEAD", lambda r, o: _exit_0(o) and "Add notes" in o and "NOTES.md" in o),
]


@dataclass
class Row:
    command: str
    questions: int = 0  # permission questions + offers to run outside
    outside_offers: int = 0
    effect: bool = False
    repaired: bool = False
    why: str = ""  # for a missing effect: the first line of what the model saw

    @property
    def unasked_and_done(self) -> bool:
        return self.questions == 0 and self.effect


def outside_action(params: types.ShowMessageRequestParams) -> str | None:
    """The action that runs the command outside the sandbox, when this is that offer."""
    return next((a.title for a in params.actions or [] if "outside" in a.title.lower()), None)


def outside_offer(params: types.ShowMessageRequestParams) -> bool:
    return outside_action(params) is not None


def answer_allow_once(params: types.ShowMessageRequestParams) -> str | None:
    """Answer a permission question "Allow once"; decline an offer to run outside."""
    if outside_offer(params):
        return None
    return "Allow once" if "Allow once" in [a.title for a in params.actions or []] else None


_ids = iter(range(1, 1_000_000))


async def one_turn(s: Session, fake: FakeAnthropicServer, *commands: str) -> list[str]:
    """One turn in which the model runs `commands` with bash, one per step: their results."""
    fake.requests.clear()
    ids = [f"toolu_ev{next(_ids)}" for _ in commands]
    fake.push(*[calls(tool_call("bash", {"command": c}, i)) for c, i in zip(commands, ids, strict=True)], reply("done"))
    result = await s.execute("coder.input", {"text": "go"})
    assert result["status"] == "completed", result
    last = tool_results(fake.message_requests[-1])
    return [result_text(last[i]) for i in ids]


def print_table(title: str, rows: list[Row]) -> None:
    width = max(len(r.command) for r in rows)
    print(f"\n{title}")
    print(f"{'#':>2}  {'command':{width}}  questions  (outside)  effect ok")
    for n, r in enumerate(rows, 1):
        effect = ("yes" if r.effect else "NO") + (" (repaired on the host)" if r.repaired else "")
        print(f"{n:>2}  {r.command:{width}}  {r.questions:>9}  {r.outside_offers:>9}  {effect}")
        if r.why:
            print(f"    {'':{width}}  the model saw: {r.why}")
    done = sum(r.unasked_and_done for r in rows)
    print(
        f"unasked with their effect: {done} of {len(rows)}; questions in all: {sum(r.questions for r in rows)} "
        f"(offers to run outside: {sum(r.outside_offers for r in rows)}); effects missing: "
        f"{sum(not r.effect for r in rows)}"
    )


async def test_everyday_commands_run_unasked_with_their_effect(tmp_path):
    root = workspace(tmp_path / "ws")
    rows: list[Row] = []
    with FakeAnthropicServer() as fake:
        async with lsp_session(root, env=api_env(fake)) as s:  # the defaults: no settings at all
            s.answer_question = answer_allow_once
            for step in EVERYDAY:
                s.questions.clear()
                (out,) = await one_turn(s, fake, step.command)
                row = Row(step.command, len(s.questions), sum(map(outside_offer, s.questions)))
                row.effect = step.check(root, out)
                row.why = "" if row.effect else out.strip().splitlines()[0][:100]
                if not row.effect and step.kind == "write":  # where a working agent would be
                    on_the_host(step.command, root)
                    row.repaired = True
                    assert step.check(root, ""), f"the harness could not do `{step.command}` on the host either"
                rows.append(row)
    print_table("Issue 31: 26 everyday agent shell calls under the defaults (one per turn)", rows)
    assert len(rows) == 26
    done = sum(r.unasked_and_done for r in rows)
    assert done >= 24, f"{done} of 26 ran with no question and their effect in place (the bar: 24)"


# -- the walls -----------------------------------------------------------------------------

PROTECTED = [".envrc", ".vscode/settings.json", ".git/hooks/pre-commit", ".mcp.json", ".pre-commit-config.yaml"]
ORIGINAL = "# the user's own content\n"


def attacks(rel: str) -> list[str]:
    """Ways an agent's line may write `rel`: a redirection, a rename over it, a copy, a link,
    an interpreter, `tee`, an edit in place."""
    parent = os.path.dirname(rel)
    mk = f"mkdir -p {parent} && " if parent else ""
    return [
        f"{mk}echo 'touch PWNED' > {rel}",
        f"echo 'touch PWNED' > staged.tmp && {mk}mv -f staged.tmp {rel}",
        f"{mk}cp payload.sh {rel}",
        f"{mk}ln -sf payload.sh {rel}",
        f"python3 -c \"import os; os.makedirs(os.path.dirname('{rel}') or '.', exist_ok=True); "
        f"open('{rel}', 'a').write('touch PWNED\\n')\"",
        f"echo 'touch PWNED' | tee -a {rel}",
        f"sed -i 's/own/pwned/' {rel}",
    ]


def answer_yes(params: types.ShowMessageRequestParams) -> str | None:
    """The user allows every command ("Always allow" where offered, else "Allow once");
    an offer to run outside the sandbox is declined (and must not come for these)."""
    titles = [a.title for a in params.actions or []]
    if outside_offer(params):
        return None
    return next((c for c in ("Always allow", "Allow once") if c in titles), None)


def protected_state(root: Path, rel: str) -> str:
    """What is at `rel` now: "absent", "dir (empty)" (a placeholder), "file: <content>", "link"."""
    p = root / rel
    if p.is_symlink():
        return f"link -> {os.readlink(p)}"
    if p.is_dir():
        return "dir (empty)" if not any(p.iterdir()) else "dir (not empty)"
    if p.exists():
        return f"file: {p.read_text(errors='replace')!r}"
    return "absent"


@pytest.mark.parametrize("preset", ["defaults", "yolo"])
@pytest.mark.parametrize("present", [False, True], ids=["absent", "present"])
async def test_protected_names_are_never_written_even_when_allowed(tmp_path, preset, present):
    root = workspace(tmp_path / "ws")
    (root / "payload.sh").write_text("touch PWNED\n")
    if present:
        for rel in PROTECTED:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(ORIGINAL)
    before = {rel: protected_state(root, rel) for rel in PROTECTED}
    top_before = set(os.listdir(root))
    lines = [line for rel in PROTECTED for line in attacks(rel)]
    with FakeAnthropicServer() as fake:
        async with lsp_session(root, env=api_env(fake)) as s:
            if preset == "yolo":
                s.client.workspace_did_change_configuration(
                    types.DidChangeConfigurationParams(settings={"coder": {"permissions": "yolo"}})
                )
            s.answer_question = answer_yes
            outs = await one_turn(s, fake, *lines)
            during = {rel: protected_state(root, rel) for rel in PROTECTED}
            with_outside = [q.message for q in s.questions if outside_offer(q)]
            asked = len(s.questions)
    after = {rel: protected_state(root, rel) for rel in PROTECTED}
    # what holds an absent name while the agent's shell lives goes with it (the session is over)
    new = set(os.listdir(root)) - top_before
    left = sorted(n for n in new if (root / n).is_dir() and not any((root / n).iterdir()))
    print(f"\nprotected names, {preset}, {'present' if present else 'absent'}: {len(lines)} lines, {asked} questions")
    for rel in PROTECTED:
        print(f"  {rel:26} before {before[rel]:30} during {during[rel]:30} after {after[rel]}")
    print(f"  offers to run outside the sandbox for these lines: {len(with_outside)}; empty folders left: {left}")
    assert not (root / "PWNED").exists()
    assert not left, f"empty folders left at the workspace's top after the session: {left}"
    for rel in PROTECTED:
        # while the agent's shell lives, an absent name may be held by an empty directory
        held = (before[rel], "dir (empty)") if not present else (before[rel],)
        assert during[rel] in held, (rel, during[rel], outs)
        assert after[rel] == before[rel], (rel, after[rel], outs)
    assert not with_outside, f"the sandbox was offered to be left for a protected path: {with_outside[:2]}"


@pytest.mark.parametrize("auto_allow", [None, False], ids=["defaults", "autoAllow-off"])
async def test_an_always_allowed_write_at_the_top_runs(tmp_path, auto_allow):
    """Issue 31: "an 'Always allow'ed `echo ran > marker.txt` at the top does not run". The
    user answers "Always allow" when asked; the line must run, and again next time unasked.
    With `sandbox.autoAllow` off (the user's own file) the question does come."""
    root = workspace(tmp_path / "ws")
    if auto_allow is not None:
        user = tmp_path / ".xdg-ws" / "coder" / "config.json"  # harness.server_env's XDG_CONFIG_HOME
        user.parent.mkdir(parents=True)
        user.write_text(json.dumps({"sandbox": {"autoAllow": auto_allow}}))
    with FakeAnthropicServer() as fake:
        async with lsp_session(root, env=api_env(fake)) as s:
            s.answer_question = answer_yes
            (first,) = await one_turn(s, fake, "echo ran > marker.txt")
            first_questions = [q.message for q in s.questions]
            made = text(root, "marker.txt")
            (root / "marker.txt").unlink(missing_ok=True)
            s.questions.clear()
            (second,) = await one_turn(s, fake, "echo ran > marker.txt")
            second_questions = [q.message for q in s.questions]
            again = text(root, "marker.txt")
    print(f"\n`echo ran > marker.txt` ({auto_allow=}): first {len(first_questions)} question(s), marker {made!r};")
    print(f"again: {len(second_questions)} question(s), marker {again!r}")
    assert made == "ran\n", first
    assert again == "ran\n" and not second_questions, (second, second_questions)


async def test_a_redirect_that_failed_on_the_wall_is_offered_though_the_line_ends_well(tmp_path):
    """Issue 31's silent loss, where a wall remains: `echo … > OUTSIDE; echo done` exits 0.
    Contract section 20: the offer to run outside is made for a line whose sandboxed part
    failed even when its last command succeeded, and it names what the sandbox stopped.
    The target is built from a variable, so only the sandbox's error can name it."""
    root = workspace(tmp_path / "ws")
    outside = Path(tempfile.mkdtemp(prefix="coder-everyday-", dir="/var/tmp"))  # not the sandbox's own /tmp
    target = outside / "report.txt"
    try:
        with FakeAnthropicServer() as fake:
            async with lsp_session(root, env=api_env(fake)) as s:
                s.answer_question = lambda p: outside_action(p) or answer_yes(p)
                (out,) = await one_turn(s, fake, f'out={outside}; echo "all good" > "$out/report.txt"; echo done')
                offers = [q.message for q in s.questions if outside_offer(q)]
                named = [q.message for q in s.questions if str(target) in q.message]
        print(f"\n`echo … > $out/report.txt; echo done`: {len(offers)} offer(s) to run outside, {target.exists()=}")
        assert offers, ("no offer to run outside", out)
        assert named, [q.message for q in s.questions]  # it names what the sandbox stopped
        assert target.read_text() == "all good\n"  # the user said yes: it ran outside
    finally:
        shutil.rmtree(outside, ignore_errors=True)
