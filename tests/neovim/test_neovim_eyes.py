"""The editor as the agent's eyes (contract section 23) in a real Neovim with a real
language server: pyright from npm (installed once into the e2e cache; skipped, with the
reason printed, only when npm cannot reach the registry), attached to Python buffers.
The plugin answers `coder/diagnostics` and `coder/languageQuery`; the fake Messages API
scripts the model's `diagnostics` and `definition` calls, and what reached the model is
read from its requests.

Second corpus, not written here: a real package (h11, from this venv's site-packages)
copied into a workspace; pyright's own CLI (`pyright --outputjson`, same configuration)
says what is wrong with it, and the `diagnostics` tool, through Neovim, must say the same:
the counts per file and each diagnostic's line and first line of its message.
"""

from __future__ import annotations

import collections
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_neovim import check, git, nvim, run_scenario, workspace  # noqa: F401  (the fixtures)

PYRIGHT_VERSION = "1.1.414"
CACHE = Path(os.environ.get("CODER_LS_E2E_CACHE", Path.home() / ".cache" / "coder-ls-e2e")) / "pyright"
TOOLS_LINE = re.compile(r"^(?P<path>\S+):(?P<line>\d+):(?P<col>\d+): (?P<sev>error|warning|info|hint): (?P<msg>.*)$")


def pyright_bin(name: str) -> Path:
    """`pyright` or `pyright-langserver`, installed from npm when missing (or skip)."""
    entry = CACHE / "node_modules" / ".bin" / name
    stamp = CACHE / f".installed-{PYRIGHT_VERSION}"
    if entry.exists() and stamp.exists():
        return entry
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip("node/npm not installed: cannot install pyright")
    CACHE.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--prefix", str(CACHE), f"pyright@{PYRIGHT_VERSION}"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0 or not entry.exists():
        reason = f"npm could not install pyright@{PYRIGHT_VERSION} (registry unreachable?): {done.stderr[-300:]}"
        print(reason)
        pytest.skip(reason)
    stamp.touch()
    return entry


def tool_text(fake: Any, call_id: str) -> str:
    for request in fake.message_requests:
        for message in request.body["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else []:
                if block.get("type") == "tool_result" and block["tool_use_id"] == call_id:
                    content = block["content"]
                    return content if isinstance(content, str) else "".join(c.get("text", "") for c in content)
    raise AssertionError(f"no tool result {call_id} reached the model")


def run_turn(
    binary: str, ws: Path, opened: str, calls: list[dict[str, Any]], files: int = 1
) -> tuple[dict[str, Any], Any]:
    """A turn in Neovim once pyright has reported on at least `files` files."""
    from anthropic_server import FakeAnthropicServer, check_rejections, reply

    with FakeAnthropicServer() as fake:
        fake.push({"text": "", "toolCalls": calls}, reply("seen"))
        env = {
            "ANTHROPIC_API_KEY": "test-key",
            "ANTHROPIC_BASE_URL": fake.url,
            "CODER_TEST_PYRIGHT": str(pyright_bin("pyright-langserver")),
            "CODER_TEST_OPEN": opened,
            "CODER_TEST_PROMPT": "what does the editor say?",
            "CODER_TEST_MIN_FILES": str(files),
        }
        r = run_scenario(binary, "eyes", ws, timeout=300, extra_env=env)
        check_rejections(fake, False)
    check(r)
    assert r["result"]["status"] == "completed", r["result"]
    return r, fake


APP = "def add(a: int, b: int) -> int:\n    return a + b\n"
MAIN = 'from app import add\n\ncount: int = "three"\nprint(add(1, 2))\n'


def test_a_type_error_and_a_definition_across_files_reach_the_model(nvim: str, workspace: Path) -> None:  # noqa: F811
    (workspace / "app.py").write_text(APP)
    (workspace / "main.py").write_text(MAIN)
    git(workspace, "add", "-A")
    git(workspace, "commit", "-qm", "python")
    calls = [
        {"id": "toolu_diag", "name": "diagnostics", "input": {}},
        {"id": "toolu_def", "name": "definition", "input": {"symbol": "add", "path": "main.py", "line": 4}},
    ]
    _, fake = run_turn(nvim, workspace, "main.py", calls)
    tools = {t["name"] for t in fake.message_requests[0].body["tools"]}
    assert {"diagnostics", "definition", "references", "symbols"} <= tools, tools
    diagnostics = tool_text(fake, "toolu_diag")
    wanted = r"^main\.py:3:14: error: Type \"Literal\['three'\]\" is not assignable to declared type \"int\""
    assert re.search(wanted, diagnostics, re.M), diagnostics
    definition = tool_text(fake, "toolu_def")
    assert "app.py:1:5: def add(a: int, b: int) -> int:" in definition, definition


def _h11() -> Path:
    for entry in sys.path:
        candidate = Path(entry) / "h11"
        if (candidate / "__init__.py").is_file():
            return candidate
    pytest.skip("h11 is not installed in this venv (it comes with httpx)")


def test_the_diagnostics_tool_says_what_pyrights_own_cli_says(nvim: str, workspace: Path) -> None:  # noqa: F811
    shutil.copytree(_h11(), workspace / "h11", ignore=shutil.ignore_patterns("__pycache__"))
    (workspace / "pyrightconfig.json").write_text(json.dumps({"typeCheckingMode": "strict"}))
    git(workspace, "add", "-A")
    git(workspace, "commit", "-qm", "h11")
    cli = subprocess.run(
        [str(pyright_bin("pyright")), "--outputjson"],
        cwd=workspace,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads(cli.stdout)
    expected: dict[str, list[tuple[int, str]]] = collections.defaultdict(list)
    for d in report["generalDiagnostics"]:
        rel = Path(d["file"]).resolve().relative_to(workspace.resolve()).as_posix()
        expected[rel].append((d["range"]["start"]["line"] + 1, d["message"].strip().split("\n")[0].rstrip()))
    assert sum(len(v) for v in expected.values()) >= 10, report["summary"]  # a corpus worth comparing

    calls = [{"id": "toolu_all", "name": "diagnostics", "input": {"limit": 200}}]
    every = " ".join(sorted(p.relative_to(workspace).as_posix() for p in (workspace / "h11").glob("*.py")))
    _, fake = run_turn(nvim, workspace, every, calls, files=len(expected))
    text = tool_text(fake, "toolu_all")
    assert "more left out" not in text, text
    got: dict[str, list[tuple[int, str]]] = collections.defaultdict(list)
    for line in text.splitlines():
        m = TOOLS_LINE.match(line)
        if m and m["sev"] != "hint":  # hints (unused, unreachable) are the editor's only: the CLI has none
            got[m["path"]].append((int(m["line"]), m["msg"]))
    assert {f: len(v) for f, v in got.items()} == {f: len(v) for f, v in expected.items()}, text
    for rel, wanted in expected.items():
        shown = sorted(got[rel])
        for (line, message), (got_line, got_message) in zip(sorted(wanted), shown, strict=True):
            assert got_line == line and got_message.startswith(message[:200]), (rel, line, message, got_message)
