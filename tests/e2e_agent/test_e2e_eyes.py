"""The editor as the agent's eyes (contract section 23), end to end: a real LSP client that
declares `coder/diagnostics` and `coder/languageQuery` and answers them as an editor would,
the real server, the strict fake Messages API scripting the model's tool calls.

What the model gets: the `diagnostics`, `definition`, `references`, `symbols` tools only
where the client declared them; compact text with workspace paths and 1-based lines;
`@diagnostics` / `@problems` / `@#Symbol` attached to the prompt. What it never gets: the
text of a file the editor's answer points at outside the workspace, through a link
leading out, or in a protected path; a hung turn when the editor errors, stays silent or
answers garbage.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from agent_e2e import api_env, calls, result_text, tool_call, tool_results
from anthropic_server import reply
from harness import init_git, lsp_session

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]

EYES = {"capabilities": {"diagnostics": True, "languageQuery": True}}
EYE_TOOLS = {"diagnostics", "definition", "references", "symbols"}
APP = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
MAIN = "from app import add\n\nprint(add(1, 2))\n"
SECRET = "hunter2-git-secret"


def rng(line: int, start: int, end: int | None = None) -> dict[str, Any]:
    return {"start": {"line": line, "character": start}, "end": {"line": line, "character": end or start + 3}}


def loc(path: Path | str, line: int, start: int) -> dict[str, Any]:
    uri = path.as_uri() if isinstance(path, Path) else path
    return {"uri": uri, "range": rng(line, start)}


class Editor:
    """The client's side of the two requests: what its language servers would say."""

    def __init__(self) -> None:
        self.diagnostics: Any = []
        self.answers: dict[str, Any] = {}  # kind -> answer (or a callable of the params)
        self.asked: list[tuple[str, dict[str, Any]]] = []

    def install(self, client: Any) -> None:
        @client.feature("coder/diagnostics")
        async def on_diagnostics(ls: Any, params: Any) -> Any:
            self.asked.append(("diagnostics", _plain(params)))
            return await _value(self.diagnostics, _plain(params))

        @client.feature("coder/languageQuery")
        async def on_query(ls: Any, params: Any) -> Any:
            p = _plain(params)
            self.asked.append((p["kind"], p))
            return await _value(self.answers.get(p["kind"]), p)


async def _value(answer: Any, params: dict[str, Any]) -> Any:
    value = answer(params) if callable(answer) else answer
    if asyncio.iscoroutine(value):
        value = await value
    return value


def _plain(value: Any) -> Any:
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


@pytest.fixture
def eyes_ws(tmp_path: Path) -> Path:
    root = init_git(tmp_path / "ws", {"app.py": APP, "main.py": MAIN})
    (root / ".git" / "config").write_text((root / ".git" / "config").read_text() + f"# {SECRET}\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.py").write_text("OUTSIDE_SECRET = 1\n")
    (root / "link.py").symlink_to(outside / "leak.py")
    return root


def tool_names(request: Any) -> set[str]:
    return {t["name"] for t in request.body.get("tools", [])}


def answer_of(fake: Any, call_id: str) -> dict[str, Any]:
    for request in reversed(fake.message_requests):
        found = tool_results(request).get(call_id)
        if found is not None:
            return found
    raise AssertionError(f"no tool result for {call_id}")


async def test_no_capability_no_tools_and_no_prompt_tokens(eyes_ws, fake):
    async with lsp_session(eyes_ws, env=api_env(fake)) as s:
        fake.push(reply("hi"))
        assert (await s.execute("coder.input", {"text": "hello"}))["status"] == "completed"
    without = fake.message_requests[-1]
    assert not tool_names(without) & EYE_TOOLS
    async with lsp_session(eyes_ws, env=api_env(fake), init_options=EYES) as s:
        fake.push(reply("hi"))
        assert (await s.execute("coder.input", {"text": "hello"}))["status"] == "completed"
    with_eyes = fake.message_requests[-1]
    assert tool_names(with_eyes) - tool_names(without) == EYE_TOOLS
    grown = (len(json.dumps(with_eyes.body["tools"])) - len(json.dumps(without.body["tools"]))) / 4
    assert 0 < grown < 300, grown  # chars/4, as benchmarks/bench_agent.py counts the fixed prompt


async def test_experimental_capability_offers_only_what_was_declared(eyes_ws, fake):
    from harness import full_caps

    caps = full_caps()
    caps.experimental = {"coderDiagnostics": True}
    async with lsp_session(eyes_ws, caps=caps, env=api_env(fake)) as s:
        fake.push(reply("hi"))
        await s.execute("coder.input", {"text": "hello"})
    assert tool_names(fake.message_requests[-1]) & EYE_TOOLS == {"diagnostics"}


async def test_diagnostics_reach_the_model_guarded_and_capped(eyes_ws, fake, tmp_path):
    editor = Editor()
    app = eyes_ws / "app.py"
    editor.diagnostics = [
        {
            "uri": app.as_uri(),
            "diagnostics": [
                {"range": rng(1, 15), "message": 'Operator "-" not\nsupported', "severity": 1, "source": "Pyright"},
                {"range": rng(4, 4), "message": "unused", "severity": 2, "code": 6133, "source": "ts"},
            ],
        },
        {"uri": "file:///etc/shadow", "diagnostics": [{"range": rng(0, 0), "message": "root:x:0:0"}]},
        {"uri": (eyes_ws / "link.py").as_uri(), "diagnostics": [{"range": rng(0, 0), "message": "via link"}]},
        {"uri": "untitled:Untitled-1", "diagnostics": [{"range": rng(0, 0), "message": "scratch"}]},
        {"uri": f"{eyes_ws.as_uri()}/../outside/leak.py", "diagnostics": [{"range": rng(0, 0), "message": "dotdot"}]},
        {"uri": (eyes_ws / "main.py").as_uri(), "diagnostics": []},
    ]
    async with lsp_session(eyes_ws, env=api_env(fake), init_options=EYES) as s:
        editor.install(s.client)
        fake.push(calls(tool_call("diagnostics", {}, "toolu_d1")), reply("seen"))
        fake.push(calls(tool_call("diagnostics", {"limit": 1}, "toolu_d2")), reply("ok"))
        assert (await s.execute("coder.input", {"text": "what is broken?"}))["status"] == "completed"
        assert (await s.execute("coder.input", {"text": "just one"}))["status"] == "completed"
    text = result_text(answer_of(fake, "toolu_d1"))
    assert "2 diagnostics (1 error, 1 warning) in 1 file:" in text
    assert 'app.py:2:16: error: Operator "-" not [Pyright]' in text  # 1-based, first line of the message
    assert "app.py:5:5: warning: unused [ts 6133]" in text
    assert "[4 left out: outside the workspace or not readable]" in text
    for leaked in ("shadow", "root:x", "via link", "scratch", "dotdot", "leak.py"):
        assert leaked not in text, text
    capped = result_text(answer_of(fake, "toolu_d2"))
    assert "app.py:2:16: error" in capped and "warning: unused" not in capped
    assert "[1 more left out: pass path, or limit (at most 200), to see them]" in capped


async def test_definition_references_symbols_and_the_guards(eyes_ws, fake):
    editor = Editor()
    app, main = eyes_ws / "app.py", eyes_ws / "main.py"
    editor.answers["definition"] = [
        loc(app, 0, 4),
        loc(Path("/etc/shadow"), 0, 0),
        loc(eyes_ws / ".git" / "config", 0, 0),
        loc(eyes_ws / "link.py", 0, 0),
    ]
    editor.answers["references"] = [loc(main, 0, 16), loc(main, 2, 6), {"uri": "untitled:x", "range": rng(0, 0)}]
    editor.answers["symbols"] = lambda p: [
        {"name": "add", "kind": 12, "location": loc(app, 0, 4)},
        {"name": "adder", "kind": 5, "location": loc(Path("/etc/passwd"), 0, 0), "containerName": "x"},
    ]
    async with lsp_session(eyes_ws, env=api_env(fake), init_options=EYES) as s:
        editor.install(s.client)
        fake.push(
            calls(
                tool_call("definition", {"symbol": "add", "path": "main.py", "line": 3}, "toolu_def"),
                tool_call("references", {"symbol": "add"}, "toolu_refs"),
                tool_call("symbols", {"query": "add"}, "toolu_sym"),
                tool_call("definition", {"symbol": "nope", "path": "main.py", "line": 3}, "toolu_miss"),
            ),
            reply("done"),
        )
        assert (await s.execute("coder.input", {"text": "where is add?"}))["status"] == "completed"
    asked_def = next(p for k, p in editor.asked if k == "definition")
    assert asked_def["uri"] == main.as_uri() and asked_def["position"] == {"line": 2, "character": 6}
    definition = result_text(answer_of(fake, "toolu_def"))
    assert "app.py:1:5: def add(a, b):" in definition
    assert ".git/config:1:1" in definition and SECRET not in definition and "[core]" not in definition
    assert "shadow" not in definition and "OUTSIDE_SECRET" not in definition
    assert "[2 left out: outside the workspace or not readable]" in definition
    refs_query = next(p for k, p in editor.asked if k == "references")  # by name: symbols first, then there
    assert refs_query["uri"] == app.as_uri() and refs_query["position"] == {"line": 0, "character": 4}
    refs = result_text(answer_of(fake, "toolu_refs"))
    assert "main.py:1:17: from app import add" in refs and "main.py:3:7: print(add(1, 2))" in refs
    assert "[1 left out" in refs
    symbols = result_text(answer_of(fake, "toolu_sym"))
    assert "app.py:1: function add" in symbols and "passwd" not in symbols
    miss = answer_of(fake, "toolu_miss")
    assert miss.get("is_error") is True and "'nope' is not on line 3 of main.py" in result_text(miss)


async def test_at_problems_and_at_symbol_attach_and_guard(eyes_ws, fake):
    editor = Editor()
    app = eyes_ws / "app.py"
    editor.diagnostics = [{"uri": app.as_uri(), "diagnostics": [{"range": rng(1, 4), "message": "bad return"}]}]
    symbols = {
        "add": [{"name": "add", "kind": 12, "location": loc(app, 0, 4)}],
        "core": [{"name": "core", "kind": 2, "location": loc(eyes_ws / ".git" / "config", 0, 0)}],
        "leak": [{"name": "leak", "kind": 13, "location": loc(eyes_ws / "link.py", 0, 0)}],
    }
    editor.answers["symbols"] = lambda p: symbols.get(p["query"], [])
    async with lsp_session(eyes_ws, env=api_env(fake), init_options=EYES) as s:
        editor.install(s.client)
        fake.push(reply("ok"))
        text = "fix @problems, see @#add and @#core, @#leak and @#missing."
        assert (await s.execute("coder.input", {"text": text}))["status"] == "completed"
        notes = [e["message"] for e in s.events_of("notice")]
    sent = json.dumps(fake.message_requests[-1].body["messages"])
    assert "(Attached: the editor's diagnostics)" in sent and "app.py:2:5: error: bad return" in sent
    assert "(Attached: add, app.py lines 1-2)" in sent and "return a - b" in sent
    assert "def mul" not in sent  # the block ends where the indentation does
    assert SECRET not in sent and "OUTSIDE_SECRET" not in sent
    assert any("@#core was not attached" in n for n in notes), notes
    assert any("@#leak was not attached" in n for n in notes), notes
    assert any("@#missing was not attached: no symbol of that name" in n for n in notes), notes


async def test_a_client_without_the_capability_keeps_at_problems_as_text(eyes_ws, fake):
    async with lsp_session(eyes_ws, env=api_env(fake)) as s:
        fake.push(reply("ok"))
        assert (await s.execute("coder.input", {"text": "fix @problems and @#add"}))["status"] == "completed"
    sent = json.dumps(fake.message_requests[-1].body["messages"])
    assert "fix @problems and @#add" in sent and "(Attached" not in sent


async def test_an_editor_that_errors_stalls_or_answers_garbage_is_a_clear_tool_error(eyes_ws, fake):
    editor = Editor()
    release = asyncio.Event()

    async def never(p: Any) -> Any:
        await release.wait()
        return []

    def fails(p: Any) -> Any:
        raise RuntimeError("the TypeScript server crashed")

    editor.diagnostics = never
    editor.answers["definition"] = fails
    editor.answers["symbols"] = {"not": "a list"}
    editor.answers["references"] = [{"uri": 42, "range": "x"}]
    async with lsp_session(eyes_ws, env=api_env(fake), init_options=EYES) as s:
        editor.install(s.client)
        fake.push(
            calls(
                tool_call("diagnostics", {}, "toolu_slow"),
                tool_call("definition", {"symbol": "add", "path": "main.py", "line": 1}, "toolu_err"),
                tool_call("symbols", {"query": "add"}, "toolu_junk"),
                tool_call("references", {"symbol": "add", "path": "app.py", "line": 1}, "toolu_junk2"),
            ),
            reply("noted"),
        )
        started = asyncio.get_running_loop().time()
        result = await s.execute("coder.input", {"text": "look"})
        took = asyncio.get_running_loop().time() - started
        release.set()
    assert result["status"] == "completed", result
    assert took < 15, took  # bounded: 5 s for the silent editor, not forever
    slow = answer_of(fake, "toolu_slow")
    assert slow.get("is_error") and "did not answer coder/diagnostics within 5 s" in result_text(slow)
    err = answer_of(fake, "toolu_err")
    assert err.get("is_error") and "could not answer coder/languageQuery" in result_text(err)
    assert "TypeScript server crashed" in result_text(err)
    junk = answer_of(fake, "toolu_junk")
    assert junk.get("is_error") and "is not SymbolInformation[]" in result_text(junk)
    junk2 = answer_of(fake, "toolu_junk2")
    assert junk2.get("is_error") and "is not Location[]" in result_text(junk2)
