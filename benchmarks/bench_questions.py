"""The questions a user is asked in a scripted 30-call agent session, per permission preset.

    python benchmarks/bench_questions.py [--before DIR] [--presets strict,balanced] [--json out.json]

Issue 31: the sandbox should buy autonomy. The session is an everyday piece of work in a
small git repository (a Makefile, a Python module, its unit tests): look around, add a
function with a test (the file tools: `edit`, `write`), build, bump the version, run the
tests, commit on a new branch, tidy up and commit again: 30 tool calls in 6 turns, 23 of
them `bash` (readers, writes at the workspace's top, `make`, git), 6 file writes and edits,
1 read. The model is the fake endpoint (tests/fakes/anthropic_server.py) following the
script whatever the answers; the server is the real one (`python -m coder_ls`) in its
default sandbox, the preset set in the user's own config file.

The "user" answers each permission question "Allow once" and declines every offer to run a
command outside the sandbox (that offer is counted apart: it is the sandbox's wall). The
client declares no `workspace/applyEdit`, so the server writes the files itself. At the
end, ten effects of the session are checked on disk and in git (the version bumped, the
function and its test there, two commits on `release/0.2`, ...): a preset that asks less
must not get there by doing less.

The presets are the ones the tree's `coder_ls.protocol.config.PRESETS` offers. `--before
DIR` (a checkout of another tree: its `coder_ls` is run through `PYTHONPATH`, as
`bench_bash_step.py --before` does) runs the same session there, preset by preset, and
prints both side by side with the ratio now / before.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import logging
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    CODER_CMD,
    REPO,
    EventWaiter,
    LspClient,
    Result,
    byte_compile,
    init_git,
    server_env,
    temp_root,
    write_user_config,
)

sys.path.insert(0, str(REPO / "tests" / "fakes"))
from anthropic_server import FakeAnthropicServer, reply

MODEL = "claude-sonnet-5-5"

CALC = """def add(a, b):
    return a + b


def mul(a, b):
    return a * b
"""
TEST_CALC = """import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from calc import add, mul


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_mul(self):
        self.assertEqual(mul(2, 3), 6)
"""
TEST_SUB = """import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from calc import sub


class SubTest(unittest.TestCase):
    def test_sub(self):
        self.assertEqual(sub(5, 3), 2)
"""
MAKEFILE = (
    "build:\n\tmkdir -p build\n\tcp -r src build/\n\n"
    "test:\n\tpython3 -m unittest discover -s tests -q\n\n"
    ".PHONY: build test\n"
)
FILES = {
    "README.md": "# calc\n\nA small calculator.\n",
    "VERSION": "0.1.0\n",
    "Makefile": MAKEFILE,
    "src/calc.py": CALC,
    "tests/test_calc.py": TEST_CALC,
    ".gitignore": "build/\n__pycache__/\n",
}

# The session: (the user's prompt, the model's tool calls in order). 30 calls.
Call = tuple[str, dict[str, Any]]
SESSION: list[tuple[str, list[Call]]] = [
    (
        "Look around the project",
        [
            ("bash", {"command": "ls -la"}),
            ("bash", {"command": "git status"}),
            ("read", {"path": "src/calc.py"}),
            ("bash", {"command": 'grep -rn "def " src'}),
            ("bash", {"command": "cat Makefile"}),
        ],
    ),
    (
        "Add subtraction, with a test",
        [
            (
                "edit",
                {
                    "path": "src/calc.py",
                    "oldString": "def mul(a, b):",
                    "newString": "def sub(a, b):\n    return a - b\n\n\ndef mul(a, b):",
                },
            ),
            ("write", {"path": "tests/test_sub.py", "content": TEST_SUB}),
            ("bash", {"command": "python3 -m unittest discover -s tests -q"}),
            (
                "edit",
                {
                    "path": "README.md",
                    "oldString": "A small calculator.",
                    "newString": "A small calculator: add, sub, mul.",
                },
            ),
            ("bash", {"command": "git diff --stat"}),
        ],
    ),
    (
        "Build it and write the docs",
        [
            ("bash", {"command": "make build"}),
            ("bash", {"command": "ls build"}),
            ("bash", {"command": 'mkdir -p docs && echo "# API" > docs/api.md'}),
            ("write", {"path": "CHANGELOG.md", "content": "# Changelog\n\n## 0.2.0\n\n- sub\n"}),
            ("bash", {"command": "python3 -m compileall -q src"}),
        ],
    ),
    (
        "Bump the version and run the tests",
        [
            ("bash", {"command": "make test"}),
            (
                "edit",
                {
                    "path": "src/calc.py",
                    "oldString": "def add(a, b):",
                    "newString": '"""Arithmetic."""\n\n\ndef add(a, b):',
                },
            ),
            ("bash", {"command": "sed -i 's/0.1.0/0.2.0/' VERSION"}),
            ("bash", {"command": "cat VERSION"}),
            ("bash", {"command": "make test"}),
        ],
    ),
    (
        "Commit it on a release branch",
        [
            ("bash", {"command": "git checkout -b release/0.2"}),
            ("bash", {"command": "git add -A"}),
            ("bash", {"command": 'git commit -m "Add sub, bump to 0.2.0"'}),
            ("bash", {"command": "git log --oneline -3"}),
            ("bash", {"command": "git status --short"}),
        ],
    ),
    (
        "Tidy up and commit",
        [
            ("bash", {"command": "rm -rf build"}),
            ("bash", {"command": "git mv docs/api.md docs/API.md"}),
            ("edit", {"path": "CHANGELOG.md", "oldString": "- sub\n", "newString": "- sub\n- docs/API.md\n"}),
            ("bash", {"command": 'git add -A && git commit -m "Tidy the docs"'}),
            ("bash", {"command": "git log --oneline | wc -l"}),
        ],
    ),
]
assert sum(len(calls) for _, calls in SESSION) == 30


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True).stdout


def read(root: Path, rel: str) -> str:
    try:
        return (root / rel).read_text()
    except OSError:
        return ""


def effects(root: Path) -> dict[str, bool]:
    """What the session should have left, checked on disk and in git."""
    commits = git(root, "log", "--format=%s").splitlines()[:2]
    return {
        "version bumped": read(root, "VERSION") == "0.2.0\n",
        "sub added": "def sub(a, b):" in read(root, "src/calc.py"),
        "its test written": "test_sub" in read(root, "tests/test_sub.py"),
        "README edited": "add, sub, mul" in read(root, "README.md"),
        "CHANGELOG written and edited": "- docs/API.md" in read(root, "CHANGELOG.md"),
        "on release/0.2": git(root, "branch", "--show-current").strip() == "release/0.2",
        "two commits made": commits == ["Tidy the docs", "Add sub, bump to 0.2.0"],
        "docs/API.md committed": "docs/API.md" in git(root, "ls-tree", "-r", "--name-only", "HEAD"),
        "build removed": not (root / "build").exists(),
        "nothing left uncommitted": git(root, "status", "--porcelain") == "",
    }


# -- one session --------------------------------------------------------------------------


@dataclass
class Count:
    preset: str
    tree: str
    questions: int = 0  # every question: the permission questions and the offers to run outside
    outside: int = 0  # offers to run outside the sandbox (declined)
    asked_calls: int = 0  # tool calls that brought at least one question
    effects: dict[str, bool] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def effects_ok(self) -> int:
        return sum(self.effects.values())


_ids = itertools.count(1)


async def _initialize(client: LspClient, root: Path) -> None:
    """An editor that applies no workspace edits: the server writes the files itself."""
    uri = root.as_uri()
    capabilities = {"window": {"workDoneProgress": True, "showMessage": {}}, "workspace": {"executeCommand": {}}}
    params = {
        "processId": os.getpid(),
        "rootUri": uri,
        "workspaceFolders": [{"uri": uri, "name": root.name}],
        "capabilities": capabilities,
    }
    await client.request("initialize", params)
    client.notify("initialized", {})


@contextlib.asynccontextmanager
async def _server(root: Path, env: dict[str, str]) -> AsyncIterator[LspClient]:
    client = await LspClient.spawn(CODER_CMD, cwd=root, env=server_env(root, env))
    try:
        await _initialize(client, root)
        yield client
    finally:
        await client.close()


def make_workspace(path: Path, preset: str) -> Path:
    """The repository (with the user's git identity in its config) and the user's preset."""
    root = init_git(path, dict(FILES))
    subprocess.run(["git", "-C", str(root), "config", "user.name", "Bench User"], check=True)
    subprocess.run(["git", "-C", str(root), "config", "user.email", "bench@example.invalid"], check=True)
    write_user_config(root, {"permissions": preset, "model": MODEL})
    return root


async def run_session(fake: FakeAnthropicServer, preset: str, tree: str, pythonpath: Path, tmp: Path) -> Count:
    """The scripted session on a fresh workspace and a fresh server of the tree at `pythonpath`."""
    count = Count(preset, tree)
    root = make_workspace(tmp / f"ws-{tree}-{preset}", preset)

    def answer(params: Any) -> Any:
        titles = [a.get("title") for a in (params or {}).get("actions") or []]
        count.questions += 1
        if any("outside" in str(t).lower() for t in titles):  # "Run outside the sandbox"
            count.outside += 1
            return None  # declined: the sandbox's wall stands
        return {"title": "Allow once"} if "Allow once" in titles else None

    t0 = asyncio.get_running_loop().time()
    env = {"ANTHROPIC_API_KEY": "x", "ANTHROPIC_BASE_URL": fake.url, "PYTHONPATH": str(pythonpath)}
    async with _server(root, env) as client:
        client.request_answers["window/showMessageRequest"] = answer
        events = EventWaiter(client)
        for prompt, tool_calls in SESSION:
            for name, inp in tool_calls:
                call = {"id": f"toolu_q{next(_ids):05d}", "name": name, "input": inp}
                fake.push(reply("", toolCalls=[call]))
            fake.push(reply("Done."))
            seen = len(fake.message_requests)
            result = await client.execute("coder.input", {"text": prompt}, token=f"q-{next(_ids)}", timeout=300)
            if result.get("status") != "completed":
                raise RuntimeError(f"{tree} {preset}: the turn {prompt!r} ended {result.get('status')}: {result}")
            if len(fake.message_requests) - seen != len(tool_calls) + 1 or fake.pending:
                raise RuntimeError(f"{tree} {preset}: the turn {prompt!r} did not follow the script")
        asked = {e.get("callId") for e in events.events if e.get("type") == "approvalRequested"}
        count.asked_calls = len(asked)
    if fake.rejections:
        raise RuntimeError(f"the fake refused requests: {fake.rejections[:1]}")
    count.effects = effects(root)
    count.seconds = asyncio.get_running_loop().time() - t0
    return count


def presets_of(pythonpath: Path) -> list[str]:
    """The presets `coder_ls.protocol.config` of that tree offers."""
    code = (
        "import json, typing\n"
        "from coder_ls.protocol import config\n"
        "p = getattr(config, 'PRESETS', None) or typing.get_args(config.Preset)\n"
        "print(json.dumps(list(p)))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return list(json.loads(out.stdout))


async def measure(presets: list[str] | None, before: Path | None) -> list[Count]:
    """Each preset (given, or every one either tree offers) on this tree ("now", the
    checkout this file is in) and, with `before`, on that tree, alternating, one fake."""
    trees: list[tuple[str, Path]] = [("now", REPO), *([("before", before)] if before else [])]
    offered = {name: presets_of(path) for name, path in trees}
    wanted = presets or list(dict.fromkeys(p for name, _ in trees for p in offered[name]))
    out = []
    with temp_root("coder-bench-questions-") as tmp, FakeAnthropicServer() as fake:
        for preset in wanted:
            for name, path in trees:
                if preset in offered[name]:
                    out.append(await run_session(fake, preset, name, path, tmp))
    return out


def table(counts: list[Count]) -> str:
    """One row a preset: questions (of which offers to run outside), calls asked about,
    effects in place; with a `before` tree, the same for it and the ratio now / before."""
    by = {(c.preset, c.tree): c for c in counts}
    presets = list(dict.fromkeys(c.preset for c in counts))
    trees = list(dict.fromkeys(c.tree for c in counts))

    def cells(c: Count | None) -> str:
        if c is None:
            return f"{'-':>9} {'':>9} {'':>12} {'':>8}"
        return f"{c.questions:>9} {c.outside:>9} {c.asked_calls:>9}/30 {c.effects_ok:>5}/10"

    width = len(cells(None))
    over = f"{'':10}" + "".join(f" | {t:^{width}}" for t in trees)
    head = f"{'preset':10}" + "".join(
        f" | {'questions':>9} {'(outside)':>9} {'calls asked':>12} {'effects':>8}" for _ in trees
    )
    lines = [over, head + (f" | {'now/before':>10}" if len(trees) > 1 else "")]
    for p in presets:
        row = f"{p:10}" + "".join(f" | {cells(by.get((p, t)))}" for t in trees)
        now, old = by.get((p, "now")), by.get((p, "before"))
        if len(trees) > 1:
            ratio = f"{now.questions / old.questions:.2f}" if now and old and old.questions else "-"
            row += f" | {ratio:>10}"
        lines.append(row)
    for c in counts:
        missing = [k for k, v in c.effects.items() if not v]
        if missing:
            lines.append(f"  effects missing, {c.tree} {c.preset}: {', '.join(missing)}")
    return "\n".join(lines)


# -- run.py ---------------------------------------------------------------------------------


async def bench_questions(quick: bool) -> list[Result]:
    counts = await measure(["balanced"] if quick else None, None)
    results = []
    for c in counts:
        notes = [f"{c.outside} of them offers to run outside (declined); {c.asked_calls} of 30 calls asked about"]
        # the design of issue 31: under the default preset no bash call asks; what is left
        # are the 6 file writes and edits (balanced asks for those, the sandbox does not cover them)
        goal = 6.0 if c.preset == "balanced" else None
        title = f"questions in a scripted 30-call session, preset {c.preset}"
        results.append(Result(f"questions_{c.preset}", title, c.questions, goal, unit="q", notes=notes))
        missing = ", ".join(k for k, v in c.effects.items() if not v) or "none"
        results.append(
            Result(
                f"session_effects_{c.preset}",
                f"the session's 10 effects in place, preset {c.preset} (asking less must not mean doing less)",
                c.effects_ok,
                10.0 if c.preset == "balanced" else None,
                op=">=",
                unit="of 10",
                notes=[f"missing: {missing}"],
            )
        )
    return results


BENCHMARKS = {"questions": bench_questions}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, help="a directory holding another coder_ls, measured beside (PYTHONPATH)")
    ap.add_argument("--presets", help="comma-separated presets (default: every preset either tree offers)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)  # the fake's connections cancelled at its stop
    byte_compile(*([args.before / "coder_ls"] if args.before else []))
    byte_compile()
    presets = [p.strip() for p in args.presets.split(",")] if args.presets else None
    counts = asyncio.run(measure(presets, args.before.resolve() if args.before else None))
    print(f"questions in a scripted 30-call session ({sum(len(c) for _, c in SESSION)} tool calls), per preset")
    print(table(counts))
    if args.json:
        data = [{**c.__dict__, "effects_ok": c.effects_ok} for c in counts]
        args.json.write_text(json.dumps(data, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
