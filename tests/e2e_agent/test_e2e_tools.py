"""Every tool the agent has, called the way a model calls it: once with only the
required arguments, once with the common optional ones. The arguments are checked
against the schema the server sent to the model, the result the model gets back is
checked, and the strict fake checks the conversation stays valid for the real API."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agent_e2e import calls, requests, result_text, tool_call, tool_results
from anthropic_server import reply

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]

TOOLS = ["read", "write", "edit", "multiEdit", "bash", "grep", "glob", "ls", "todoRead", "todoWrite"]
TURN_TIMEOUT = 20.0  # a tool that hangs (grep used to wait 60 s on the LSP pipe) fails here


async def bounded_turn(a: Any, text: str) -> dict[str, Any]:
    """A turn that must end within TURN_TIMEOUT; a hung one is interrupted (so the shared
    server stays usable for the next test) and fails the test."""
    task = asyncio.ensure_future(a.turn(text))
    done, _ = await asyncio.wait({task}, timeout=TURN_TIMEOUT)
    if not done:
        await a.s.execute("coder.interrupt", {})
        await asyncio.wait({task}, timeout=10)
        pytest.fail(f"the turn {text!r} did not finish within {TURN_TIMEOUT} s")
    result: dict[str, Any] = task.result()
    return result


def check_against_schema(tools: list[dict[str, Any]], name: str, args: dict[str, Any]) -> None:
    """The call is one the model could make: the tool is offered, every argument is a
    property of its schema, every required property is given."""
    by_name = {t["name"]: t for t in tools}
    assert name in by_name, f"{name} not offered to the model: {sorted(by_name)}"
    schema = by_name[name]["input_schema"]
    properties = schema.get("properties", {})
    assert set(args) <= set(properties), (name, sorted(args), sorted(properties))
    assert set(schema.get("required", [])) <= set(args), (name, schema.get("required"))


async def run_tool(a: Any, name: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """One turn: the model calls `name(args)` and then ends. The tool result's text and block."""
    a.fake.push(calls(tool_call(name, args, "toolu_t1")), reply("done"))
    result = await bounded_turn(a, f"please use {name}")
    assert result["status"] == "completed", result
    sent = requests(a.fake)
    assert len(sent) == 2, [r.body["messages"][-1] for r in sent]
    check_against_schema(sent[0].body["tools"], name, args)
    block = tool_results(sent[1])["toolu_t1"]
    return result_text(block), block


def ok(block: dict[str, Any]) -> None:
    assert not block.get("is_error"), result_text(block)


async def test_every_tool_is_offered(agent):
    a = await agent(permissions="yolo")
    a.fake.push(reply("hi"))
    await a.turn("hello")
    offered = {t["name"] for t in requests(a.fake)[0].body["tools"]}
    assert set(TOOLS) <= offered


async def test_read_minimal_and_with_range(agent):
    a = await agent(permissions="yolo")
    (a.root / "r.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    text, block = await run_tool(a, "read", {"path": "r.txt"})
    ok(block)
    assert "line 1" in text and "line 10" in text
    a = await agent(permissions="yolo")
    text, block = await run_tool(a, "read", {"path": "r.txt", "offset": 3, "limit": 2})
    ok(block)
    assert "line 3" in text and "line 4" in text and "line 5" not in text and "line 2\n" not in text


async def test_write_new_file(agent):
    a = await agent(permissions="yolo")
    _, block = await run_tool(a, "write", {"path": "w/new.txt", "content": "hello\n"})
    ok(block)
    assert (a.root / "w" / "new.txt").read_text() == "hello\n"


async def test_edit_minimal_and_replace_all(agent):
    a = await agent(permissions="yolo")
    (a.root / "e.txt").write_text("alpha beta\ngamma\n")
    _, block = await run_tool(a, "edit", {"path": "e.txt", "oldString": "gamma", "newString": "delta"})
    ok(block)
    assert (a.root / "e.txt").read_text() == "alpha beta\ndelta\n"
    (a.root / "e2.txt").write_text("x x x\n")
    a = await agent(permissions="yolo")
    _, block = await run_tool(a, "edit", {"path": "e2.txt", "oldString": "x", "newString": "y", "replaceAll": True})
    ok(block)
    assert (a.root / "e2.txt").read_text() == "y y y\n"


async def test_multi_edit_minimal_and_replace_all(agent):
    a = await agent(permissions="yolo")
    (a.root / "m.txt").write_text("one\ntwo\nthree\n")
    edits = [{"oldString": "one", "newString": "1"}, {"oldString": "three", "newString": "3"}]
    _, block = await run_tool(a, "multiEdit", {"path": "m.txt", "edits": edits})
    ok(block)
    assert (a.root / "m.txt").read_text() == "1\ntwo\n3\n"
    a = await agent(permissions="yolo")
    edits = [{"oldString": "o", "newString": "0", "replaceAll": True}]
    _, block = await run_tool(a, "multiEdit", {"path": "m.txt", "edits": edits})
    ok(block)
    assert (a.root / "m.txt").read_text() == "1\ntw0\n3\n"


async def test_bash_minimal_and_with_timeout(agent):
    a = await agent(permissions="yolo")
    text, block = await run_tool(a, "bash", {"command": "echo from-bash"})
    ok(block)
    assert "from-bash" in text and "exit code: 0" in text
    a = await agent(permissions="yolo")
    text, _ = await run_tool(a, "bash", {"command": "sleep 5; echo late", "timeout": 0.5})
    assert "timed out" in text and "late" not in text


async def test_grep_without_path_does_not_hang(agent):
    a = await agent(permissions="yolo")
    (a.root / "g.py").write_text("NEEDLE_ONE = 1\n")
    text, block = await run_tool(a, "grep", {"pattern": "NEEDLE_ONE"})
    ok(block)
    assert "g.py" in text


async def test_grep_with_path_glob_and_ignore_case(agent):
    a = await agent(permissions="yolo")
    (a.root / "gd").mkdir(exist_ok=True)
    (a.root / "gd" / "a.py").write_text("needle_two = 2\n")
    (a.root / "gd" / "b.txt").write_text("NEEDLE_TWO\n")
    (a.root / "outside.py").write_text("needle_two\n")
    args = {"pattern": "NEEDLE_TWO", "path": "gd", "glob": "*.py", "ignoreCase": True}
    text, block = await run_tool(a, "grep", args)
    ok(block)
    assert "a.py" in text and "b.txt" not in text and "outside.py" not in text


async def test_glob_minimal_and_with_path(agent):
    a = await agent(permissions="yolo")
    (a.root / "gl" / "sub").mkdir(parents=True, exist_ok=True)
    (a.root / "gl" / "sub" / "z.rs").write_text("fn main() {}\n")
    text, block = await run_tool(a, "glob", {"pattern": "**/*.rs"})
    ok(block)
    assert "z.rs" in text
    a = await agent(permissions="yolo")
    text, block = await run_tool(a, "glob", {"pattern": "sub/*.rs", "path": "gl"})
    ok(block)
    assert "z.rs" in text


async def test_ls_minimal_and_with_path(agent):
    a = await agent(permissions="yolo")
    text, block = await run_tool(a, "ls", {})
    ok(block)
    assert "app.py" in text and "README.md" in text
    (a.root / "lsdir").mkdir(exist_ok=True)
    (a.root / "lsdir" / "inner.txt").write_text("i\n")
    a = await agent(permissions="yolo")
    text, block = await run_tool(a, "ls", {"path": "lsdir"})
    ok(block)
    assert "inner.txt" in text and "app.py" not in text


async def test_todo_write_then_read(agent):
    a = await agent(permissions="yolo")
    text, block = await run_tool(a, "todoRead", {})
    ok(block)
    assert "empty" in text.lower()
    a.fake.push(
        calls(tool_call("todoWrite", {"todos": [{"content": "first step"}]}, "toolu_w1")),
        calls(
            tool_call(
                "todoWrite",
                {"todos": [{"content": "first step", "status": "completed", "id": "1"}, {"content": "second"}]},
                "toolu_w2",
            )
        ),
        calls(tool_call("todoRead", {}, "toolu_r1")),
        reply("done"),
    )
    a.fake.requests.clear()
    result = await bounded_turn(a, "plan it")
    assert result["status"] == "completed", result
    sent = requests(a.fake)
    check_against_schema(sent[0].body["tools"], "todoWrite", {"todos": []})
    for call_id, r in (("toolu_w1", sent[1]), ("toolu_w2", sent[2]), ("toolu_r1", sent[3])):
        ok(tool_results(r)[call_id])
    listing = result_text(tool_results(sent[3])["toolu_r1"])
    assert "first step" in listing and "second" in listing
