"""The one tool-call pipeline (`agent/toolcall.py`) with fake tools, hooks and host: the
input is parsed first (an error is the result, nothing asked), then PreToolUse, the policy
on the typed value, the question, the run and PostToolUse, in that order."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import msgspec
import pytest

from coder_ls.agent.grants import Decision
from coder_ls.agent.hooksite import ToolGate, fold
from coder_ls.agent.toolcall import ToolCalls
from coder_ls.agent.tools.base import Tool, ToolContext, ToolOutput, ToolRegistry
from coder_ls.agent.tools.bash import BashInput
from coder_ls.agent.tools.files import WriteInput
from coder_ls.guard import sandbox as sbx
from coder_ls.hooks.records import Verdict
from coder_ls.protocol.config import Config, Rule
from coder_ls.protocol.events import ApprovalResolved, ToolCallBegin, ToolCallEnd
from coder_ls.protocol.messages import ToolUseBlock


class ProbeInput(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    value: int


class Log:
    def __init__(self) -> None:
        self.steps: list[str] = []
        self.inputs: list[Any] = []
        self.flags: list[bool] = []


def probe_tool(log: Log, name: str = "probe", kind: type[msgspec.Struct] = ProbeInput) -> Tool[Any]:
    async def run(ctx: ToolContext, inp: Any) -> ToolOutput:
        log.steps.append("run")
        log.inputs.append(inp)
        log.flags.append(ctx.sandbox_required)
        return ToolOutput(f"ran {inp!r}")

    return Tool(name, "a fake tool", kind, run)


class FakeHooks:
    """PreToolUse, PermissionRequest and PostToolUse that log and answer as told."""

    def __init__(self, log: Log, root: Path, pre: Verdict | None = None, permission: Verdict | None = None) -> None:
        self.log, self.root = log, root
        self.pre, self.perm = pre or Verdict(), permission or Verdict()

    async def before_tool(self, call: ToolUseBlock) -> ToolGate:
        self.log.steps.append("pre")
        updated = self.pre.updated_input
        return ToolGate(updated if updated is not None else call.input, self.pre)

    async def permission(self, call: ToolUseBlock, tool_input: Any, decision: Decision, preset: str) -> Decision:
        self.log.steps.append("permission")
        return fold(decision, self.perm, preset)

    async def after_tool(self, call: ToolUseBlock, tool_input: Any, text: str, is_error: bool) -> str:
        self.log.steps.append("post")
        return text


class Rig:
    def __init__(self, harness: Any, config: Config, tools: list[Tool[Any]], hooks: FakeHooks) -> None:
        self.h, self.config = harness, config
        harness.ctx.config = config
        original_ask = harness.host.ask

        async def ask(kind: str, message: str, choices: list[str]) -> str | None:
            hooks.log.steps.append("ask")
            return await original_ask(kind, message, choices)

        harness.host.ask = ask
        self.calls = ToolCalls(
            harness.ctx, ToolRegistry(tools), hooks, config=lambda: self.config, persist_rule=lambda r: None
        )

    async def run(self, name: str, input: dict[str, Any], call_id: str = "c1") -> tuple[str, bool]:
        block = await self.calls.run(ToolUseBlock(id=call_id, name=name, input=input))
        return str(block.content), bool(block.is_error)


@pytest.fixture
def log() -> Log:
    return Log()


def rig(make_harness: Any, log: Log, config: Config | None = None, answer: str | None = "Allow once", **hooks: Any):
    h = make_harness(config or Config(), answer=answer)
    tools = [probe_tool(log), probe_tool(log, "write", WriteInput), probe_tool(log, "bash", BashInput)]
    return Rig(h, config or Config(), tools, FakeHooks(log, h.root, **hooks))


async def test_the_order_is_parse_hook_decide_ask_run_hook(make_harness, log) -> None:
    r = rig(make_harness, log)
    text, is_error = await r.run("probe", {"value": 1})
    assert not is_error and text == "ran ProbeInput(value=1)"
    assert log.steps == ["pre", "permission", "ask", "run", "post"]
    assert isinstance(log.inputs[0], ProbeInput)  # the tool and the policy get the typed value
    kinds = [type(e) for e in r.h.events]
    assert kinds[0] is ToolCallBegin and kinds[-1] is ToolCallEnd


async def test_a_parse_error_is_the_result_and_nothing_is_asked(make_harness, log) -> None:
    r = rig(make_harness, log)
    text, is_error = await r.run("probe", {"value": "not a number"})
    assert is_error and "invalid input for probe" in text
    assert log.steps == []  # no hook, no question, no run
    text, is_error = await r.run("nothing", {})
    assert is_error and "Unknown tool 'nothing'" in text and log.steps == []


async def test_the_policy_decides_on_the_typed_value(make_harness, log, monkeypatch) -> None:
    from coder_ls.agent import policy

    seen: list[Any] = []
    real = policy.decide

    def spy(tool: str, input: Any, *args: Any, **kw: Any) -> Decision:
        seen.append(input)
        return real(tool, input, *args, **kw)

    monkeypatch.setattr(policy, "decide", spy)
    r = rig(make_harness, log, Config(permissions="yolo"))
    await r.run("write", {"path": "a.txt", "content": "x"})
    assert seen == [WriteInput(path="a.txt", content="x")]


async def test_a_hook_deny_comes_before_the_question(make_harness, log) -> None:
    r = rig(make_harness, log, pre=Verdict(decision="deny", reason="no probes"))
    text, is_error = await r.run("probe", {"value": 1})
    assert is_error and text == "Not allowed: a hook denied it (no probes)"
    assert log.steps == ["pre"]


async def test_a_deny_rule_beats_a_hook_allow(make_harness, log) -> None:
    config = Config(rules=[Rule(tool="probe", action="deny")])
    r = rig(make_harness, log, config, pre=Verdict(decision="allow"))
    text, is_error = await r.run("probe", {"value": 1})
    assert is_error and text.startswith("Not allowed: rule for probe")
    assert log.steps == ["pre"]


async def test_a_hook_allow_stands_in_for_the_presets_question_only(make_harness, log) -> None:
    r = rig(make_harness, log, pre=Verdict(decision="allow"))
    await r.run("probe", {"value": 1})
    assert log.steps == ["pre", "run", "post"]
    log.steps.clear()
    r.config = Config(permissions="yolo")
    await r.run("write", {"path": ".envrc", "content": "x"})  # a protected path asks anyway
    assert log.steps == ["pre", "permission", "ask", "run", "post"]


async def test_an_ask_answered_no_never_runs(make_harness, log) -> None:
    r = rig(make_harness, log, answer="Deny")
    text, is_error = await r.run("probe", {"value": 1})
    assert is_error and "denied it" in text and "run" not in log.steps
    log.steps.clear()
    r = rig(make_harness, log, answer=None)  # dismissed
    text, is_error = await r.run("probe", {"value": 1})
    assert is_error and "dismissed" in text and "run" not in log.steps


async def test_updated_input_is_parsed_and_decided_again(make_harness, log) -> None:
    to_envrc = Verdict(updated_input={"path": ".envrc", "content": "x"})  # the fake hook speaks our keys
    r = rig(make_harness, log, Config(permissions="auto-edit"), answer="Deny", pre=to_envrc)
    text, is_error = await r.run("write", {"path": "a.txt", "content": "x"})  # auto-edit allows a.txt
    assert is_error and "run" not in log.steps
    (question,) = r.h.host.asked
    assert ".envrc" in question[1] and "protected" in question[1]
    log.steps.clear()
    bad = Verdict(updated_input={"command": 42})
    r = rig(make_harness, log, pre=bad)
    text, is_error = await r.run("bash", {"command": "ls"})
    assert is_error and "after a PreToolUse hook changed the input" in text
    assert log.steps == ["pre"]  # not asked, not run
    log.steps.clear()
    r = rig(make_harness, log, answer="Deny", pre=Verdict(updated_input={"command": "touch x"}))
    await r.run("bash", {"command": "ls"})  # `ls` runs unasked; `touch x` does not
    assert log.steps == ["pre", "permission", "ask"]


async def test_cancelled_while_asking(make_harness, log) -> None:
    r = rig(make_harness, log)
    r.h.host.block_ask = True
    task = asyncio.create_task(r.run("probe", {"value": 1}))
    await r.h.host.asking.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert "run" not in log.steps and "post" not in log.steps
    assert [e.decision for e in r.h.of(ApprovalResolved)] == ["cancelled"]


class BoxedShell:
    """A shell that says a bubblewrap sandbox runs its commands."""

    def __init__(self, root: Path) -> None:
        self.cwd = root
        self.box = sbx.Sandbox(
            root=str(root), mode="workspace-write", network=False, writable=(), tmp="/tmp/t", cache="/tmp/c"
        )

    def sandbox_for(self, config: Any) -> sbx.Sandbox | None:
        return None if config.mode == "off" else self.box

    def exports(self) -> dict[str, str]:
        return {}


async def test_a_call_the_sandbox_holds_runs_unasked_and_says_so_to_the_tool(make_harness, log) -> None:
    r = rig(make_harness, log)
    r.h.ctx.shell = BoxedShell(r.h.root)
    await r.run("bash", {"command": "touch x"})
    assert log.steps == ["pre", "run", "post"] and log.flags == [True]
    assert r.h.ctx.sandbox_required is False  # only for that call
    await r.run("bash", {"command": "curl https://example.com"})  # needs the network: asked
    assert "ask" in log.steps and log.flags == [True, False]
    (question,) = r.h.host.asked
    assert "Asked because it needs the network (`curl`)" in question[1]
