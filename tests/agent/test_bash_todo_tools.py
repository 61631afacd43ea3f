from __future__ import annotations

import msgspec
import pytest

from coder_ls.agent.tools import Tool, ToolContext, ToolOutput, ToolRegistry, build_default_tools
from coder_ls.agent.tools.bash import BashInput, make_bash_tool
from coder_ls.protocol.config import Config, ShellConfig
from coder_ls.protocol.events import ShellFinished, ShellOutput, TodoItem, TodoUpdated

NAMES = [
    *("read", "write", "edit", "multiEdit", "bash", "shell_output", "shell_kill"),
    *("grep", "glob", "ls", "todoRead", "todoWrite", "ask_user", "web_fetch"),
]


def test_registry_and_schemas() -> None:
    reg = build_default_tools()
    assert reg.names() == NAMES
    assert reg.get("nope") is None and "edit" in reg
    specs = {s.name: s for s in reg.specs()}
    edit = specs["edit"].input_schema
    assert edit["type"] == "object"
    assert set(edit["properties"]) == {"path", "oldString", "newString", "replaceAll"}
    assert edit["required"] == ["path", "oldString", "newString"]
    multi = specs["multiEdit"].input_schema
    assert multi["properties"]["edits"]["items"]["required"] == ["oldString", "newString"]
    for spec in specs.values():
        assert "$defs" not in msgspec.json.encode(spec.input_schema).decode()
        assert "$ref" not in msgspec.json.encode(spec.input_schema).decode()
        assert spec.description
    assert specs["read"].input_schema["properties"]["offset"]["type"] == "integer"
    assert reg.subset(["read", "ls"]).names() == ["read", "ls"]
    try:
        ToolRegistry([reg.get("read"), reg.get("read")])  # type: ignore[list-item]
    except ValueError as exc:
        assert "duplicate" in str(exc)


async def test_bash_runs_in_shell_with_caps(make_harness) -> None:
    h = make_harness(Config(shell=ShellConfig(timeout_seconds=30, max_output_bytes=1000)))
    h.shell.chunks = ("hel", "lo\n")
    tool = make_bash_tool(check_command=lambda c, r: None)
    out = await tool.call(h.ctx, {"command": "echo hello"})
    assert not out.is_error
    assert out.text == "hello\n[exit code: 0]"
    assert h.shell.calls == [{"command": "echo hello", "timeout": 30, "max_output_bytes": 1000}]
    assert [e.chunk for e in h.of(ShellOutput)] == ["hel", "lo\n"]
    (fin,) = h.of(ShellFinished)
    assert fin.exit_code == 0 and fin.command == "echo hello"
    assert h.reports == ["Running: echo hello"]
    await tool.call(h.ctx, {"command": "sleep 1", "timeout": 5})
    await tool.call(h.ctx, {"command": "sleep 1", "timeout": 500})
    assert [c["timeout"] for c in h.shell.calls[1:]] == [5, 30]


async def test_bash_failure_timeout_and_truncation(harness) -> None:
    FakeResult = type(harness.shell.result)

    tool = make_bash_tool(check_command=lambda c, r: None)
    harness.shell.result = FakeResult("boom\n", 2)
    out = await tool.call(harness.ctx, {"command": "false"})
    assert not out.is_error and out.text.endswith("[exit code: 2]")
    harness.shell.result = FakeResult("partial", None, truncated=True, timed_out=True)
    out = await tool.call(harness.ctx, {"command": "sleep 999"})
    assert out.is_error and "[output truncated]" in out.text and "timed out after 120 s" in out.text


async def test_a_policy_check_is_reused_only_for_that_very_command_and_cwd(harness, monkeypatch) -> None:
    from coder_ls.agent.tools import bash

    seen: list[str] = []

    def check(command: str, root: object, cwd: object = None) -> str | None:
        seen.append(command)
        return "no" if "rm" in command else None

    monkeypatch.setattr(bash, "default_check", check)
    tool = make_bash_tool()
    cwd = getattr(harness.ctx.shell, "cwd", None)
    harness.ctx.checked = ("ls", cwd)  # what the policy passed: another command
    out = await tool.call(harness.ctx, {"command": "rm -rf x"})
    assert out.is_error and "refused" in out.text and seen == ["rm -rf x"]
    harness.ctx.checked = ("rm -rf x", harness.root / "elsewhere")  # the same command, another cwd
    assert (await tool.call(harness.ctx, {"command": "rm -rf x"})).is_error and len(seen) == 2
    harness.ctx.checked = ("ls", cwd)
    assert not (await tool.call(harness.ctx, {"command": "ls"})).is_error and len(seen) == 2  # not checked twice


async def test_bash_refused_command(harness) -> None:
    seen: list[tuple[str, object]] = []

    def check(command: str, root: object) -> str | None:
        seen.append((command, root))
        return "it would delete the whole file system" if "rm -rf /" in command else None

    tool = make_bash_tool(check_command=check)
    out = await tool.call(harness.ctx, {"command": "rm -rf /"})
    assert out.is_error and "refused" in out.text and "whole file system" in out.text
    assert harness.shell.calls == [] and seen == [("rm -rf /", harness.root)]
    bad = await tool.call(harness.ctx, {"command": ""})
    assert bad.is_error and "invalid input for bash" in bad.text


async def test_todos(harness) -> None:
    reg = build_default_tools()
    out = await reg.get("todoRead").call(harness.ctx, {})
    assert "empty" in out.text
    todos = [
        {"content": "write tests", "status": "in_progress"},
        {"content": "ship", "id": "1"},
        {"content": "celebrate", "status": "completed"},
    ]
    out = await reg.get("todoWrite").call(harness.ctx, {"todos": todos})
    assert not out.is_error and "1/3 done" in out.text
    assert harness.ctx.todos == [
        TodoItem("write tests", "in_progress", "2"),
        TodoItem("ship", "pending", "1"),
        TodoItem("celebrate", "completed", "3"),
    ]
    (ev,) = harness.of(TodoUpdated)
    assert ev.todos == harness.ctx.todos
    listing = (await reg.get("todoRead").call(harness.ctx, {})).text
    assert listing.splitlines() == ["[>] 2. write tests", "[ ] 1. ship", "[x] 3. celebrate"]
    bad = await reg.get("todoWrite").call(harness.ctx, {"todos": [{"content": "x", "status": "doing"}]})
    assert bad.is_error and "status" in bad.text
    assert len(harness.ctx.todos) == 3


async def test_bash_with_the_real_persistent_shell(harness) -> None:
    shell_mod = pytest.importorskip("coder_ls.engine.shell")
    (harness.root / "sub").mkdir()  # a sandbox cannot create entries at the workspace's top
    shell = shell_mod.PersistentShell(harness.root)
    harness.ctx.shell = shell
    tool = make_bash_tool(check_command=lambda c, r: None)
    try:
        out = await tool.call(harness.ctx, {"command": "export GREETING=hi; mkdir -p sub && cd sub"})
        assert out.text.endswith("[exit code: 0]"), out.text
        out = await tool.call(harness.ctx, {"command": 'echo "$GREETING from $(basename "$PWD")"; exit 3'})
        assert out.text == "hi from sub\n[exit code: 3]"
        assert "".join(e.chunk for e in harness.of(ShellOutput)) == "hi from sub\n"
    finally:
        await shell.close()


async def test_unexpected_tool_failure_is_an_error_output(harness) -> None:
    async def boom(ctx: ToolContext, inp: BashInput) -> ToolOutput:
        raise RuntimeError("kaput")

    tool = Tool("boom", "fails", BashInput, boom)
    out = await tool.call(harness.ctx, {"command": "x"})
    assert out.is_error and "RuntimeError: kaput" in out.text
