"""Contract section 22, background shells: `bash {background: true}` answers at once with a
shellId; `shell_output` returns the new output (only what is new on a second read) and the
exit code once it ended; `shell_kill` ends the whole group; `/shells` lists them. They run in
the agent's sandbox (the protected paths stay read-only), through the same policy (a denied
command is not started), at most 8 at once per session, and end with their session (`/new`,
the server's `shutdown`) and with the server, SIGKILLed included.

A real LSP client drives the real server (tests/harness.py); the real SDK talks to the
strict fake Messages endpoint; the sandbox is the real bubblewrap; the processes are real
and looked for in /proc by a token in their command lines."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from agent_e2e import APP, api_env, calls, result_text, tool_call, tool_results
from anthropic_server import FakeAnthropicServer, reply
from harness import Session, init_git, lsp_session, server_process
from lsprotocol import types

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]
_ids = iter(range(1, 10_000))
_marks = iter(range(10_000))


def mark() -> str:
    """A sleep duration no other process uses: the token looked for in /proc."""
    return f"0.2{os.getpid() % 1000:03d}{next(_marks):03d}1"


def procs_with(token: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if token.encode() in f.read():
                    with open(f"/proc/{entry}/stat", "rb") as f:
                        stat = f.read()
                    if stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] not in (b"Z", b"X"):
                        found.append(int(entry))
    return found


async def gone(token: str, seconds: float = 5.0) -> bool:
    for _ in range(int(seconds / 0.05)):
        if not procs_with(token):
            return True
        await asyncio.sleep(0.05)
    return False


def step(name: str, **inp: Any) -> tuple[dict[str, Any], str]:
    call_id = f"toolu_bg{next(_ids)}"
    return calls(tool_call(name, inp, call_id)), call_id


def loop(token: str) -> str:
    return f"i=0; while sleep {token}; do i=$((i+1)); echo tick-$i; done"


async def run_steps(s: Session, fake: FakeAnthropicServer, *steps: tuple[dict[str, Any], str]) -> list[str]:
    """One turn in which the model makes these tool calls, one per step; their results."""
    fake.push(*[one for one, _ in steps], reply("done"))
    result = await s.execute("coder.input", {"text": "go"})
    assert result["status"] == "completed", result
    last = tool_results(fake.message_requests[-1])
    return [result_text(last[call_id]) for _, call_id in steps]


async def shells(s: Session) -> list[dict[str, Any]]:
    result = await s.execute("coder.input", {"text": "/shells"})
    assert result["status"] == "completed", result
    listed: list[dict[str, Any]] = result["data"]["shells"]
    return listed


async def test_a_loop_read_twice_gives_only_new_output_then_kill_ends_it(agent):
    a = await agent(permissions="yolo")
    token = mark()
    started, _, read1, _ = await run_steps(
        a.s,
        a.fake,
        step("bash", command=loop(token), background=True),
        step("bash", command="sleep 1"),
        step("shell_output", shellId="bg1"),
        step("bash", command="sleep 1"),
    )
    assert "bg1" in started, started
    assert "tick-1\n" in read1 and "running" in read1, read1
    assert procs_with(token), "the background loop is not running"
    (read2,) = await run_steps(a.s, a.fake, step("shell_output", shellId="bg1"))
    assert "tick-1\n" not in read2 and "tick-" in read2, (read1, read2)  # only what is new
    last1 = max(int(t.split("-")[1]) for t in read1.split() if t.startswith("tick-"))
    assert f"tick-{last1 + 1}\n" in read2, (read1, read2)  # ... and nothing of it lost
    listed = await shells(a.s)
    assert [(x["shellId"], x["state"], x["command"]) for x in listed] == [("bg1", "running", loop(token))]
    assert listed[0]["runtime"] >= 1.5 and listed[0].get("exitCode") is None, listed
    (killed,) = await run_steps(a.s, a.fake, step("shell_kill", shellId="bg1"))
    assert "bg1 killed" in killed, killed
    assert await gone(token), f"still running after shell_kill: {procs_with(token)}"
    assert [x["state"] for x in await shells(a.s)] == ["killed"]


async def test_the_exit_code_of_one_that_ended_is_reported(agent):
    a = await agent(permissions="yolo")
    started, _, read = await run_steps(
        a.s,
        a.fake,
        step("bash", command="echo out-A; sleep 0.2; echo err-B >&2; exit 3", background=True),
        step("bash", command="sleep 1"),
        step("shell_output", shellId="bg1"),
    )
    assert "bg1" in started
    assert "out-A\nerr-B" in read and "exited" in read and "exit code: 3" in read, read
    (listed,) = await shells(a.s)
    assert (listed["state"], listed["exitCode"]) == ("exited", 3), listed


async def test_new_ends_the_sessions_background_shells(agent):
    a = await agent(permissions="yolo")
    token = mark()
    (started,) = await run_steps(a.s, a.fake, step("bash", command=loop(token), background=True))
    assert "bg1" in started and await a.s.wait_for(lambda: procs_with(token), 5)
    result = await a.turn("/new")
    assert result["status"] == "completed", result
    assert await gone(token), f"still running after /new: {procs_with(token)}"
    assert await shells(a.s) == []  # the new session has none


async def test_the_sandbox_walls_hold_for_a_background_command(agent):
    a = await agent(permissions="yolo")
    root = a.root
    before = (root / ".git" / "config").read_text()
    command = (
        "echo owned > .envrc; echo envrc-$?; echo '[core] hooksPath=x' >> .git/config; echo config-$?; "
        "echo ok > bgout/made.txt; echo made-$?"
    )
    _, started, _, read = await run_steps(
        a.s,
        a.fake,
        step("bash", command="mkdir -p bgout"),
        step("bash", command=command, background=True),
        step("bash", command="sleep 1"),
        step("shell_output", shellId="bg1"),
    )
    assert "bg1" in started, started
    assert "envrc-1" in read and "config-1" in read, read  # refused inside the sandbox
    assert "made-0" in read and (root / "bgout" / "made.txt").read_text() == "ok\n", read  # the workspace is not
    assert not (root / ".envrc").is_file()  # (the agent's shell may hold the name with an empty folder)
    assert (root / ".git" / "config").read_text() == before


async def test_a_denied_command_is_not_started_in_the_background_either(agent):
    token = mark()
    a = await agent(permissions="yolo", rules=[{"tool": "bash", "action": "deny", "command": "sleep"}])
    (started,) = await run_steps(a.s, a.fake, step("bash", command=f"sleep {token}", background=True))
    assert started.startswith("Not allowed"), started
    await asyncio.sleep(0.3)
    assert not procs_with(token)
    assert await shells(a.s) == []


async def test_a_command_the_user_denies_is_not_started_and_the_question_says_background(agent):
    token = mark()
    a = await agent(sandbox={"autoAllow": False})  # balanced: a shell command is asked about
    a.s.answer_question = lambda p: "Deny"
    (started,) = await run_steps(a.s, a.fake, step("bash", command=f"sleep {token}", background=True))
    assert [q.message for q in a.s.questions if token in q.message], a.s.questions
    (question,) = [q.message for q in a.s.questions if token in q.message]
    assert "in the background" in question, question
    assert "bg1" not in started, started
    await asyncio.sleep(0.3)
    assert not procs_with(token)
    assert await shells(a.s) == []


async def test_at_most_eight_run_at_once_in_a_session(agent):
    a = await agent(permissions="yolo")
    token = mark()
    results = await run_steps(a.s, a.fake, *[step("bash", command=loop(token), background=True) for _ in range(9)])
    assert [r.split(" (")[0] for r in results[:8]] == [f"Started in the background as bg{i}" for i in range(1, 9)]
    assert "not started" in results[8] and "8 background shells are running" in results[8], results[8]
    assert "shell_kill" in results[8]
    assert [x["state"] for x in await shells(a.s)] == ["running"] * 8
    (killed, again) = await run_steps(
        a.s, a.fake, step("shell_kill", shellId="bg3"), step("bash", command=loop(token), background=True)
    )
    assert "bg3 killed" in killed and "as bg9" in again, (killed, again)  # one ended: room for one
    await a.turn("/new")
    assert await gone(token)


@contextlib.asynccontextmanager
async def own_server(root: Path, fake: FakeAnthropicServer) -> AsyncIterator[Session]:
    async with lsp_session(root, env=api_env(fake)) as s:
        s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"coder": {"permissions": "yolo"}})
        )
        yield s


async def test_no_background_shell_outlives_a_sigkilled_server(tmp_path, fake):
    root = init_git(tmp_path / "ws", {"app.py": APP})
    token = mark()
    async with own_server(root, fake) as s:
        (started,) = await run_steps(s, fake, step("bash", command=loop(token), background=True))
        assert "bg1" in started and await s.wait_for(lambda: procs_with(token), 5)
        proc = server_process(s)
        proc.kill()  # SIGKILL: no cleanup of the server's runs
        await asyncio.wait_for(proc.wait(), 10)
        assert await gone(token), f"orphans of the killed server: {procs_with(token)}"


async def test_the_servers_shutdown_ends_them_before_exit(tmp_path, fake):
    root = init_git(tmp_path / "ws", {"app.py": APP})
    token = mark()
    async with own_server(root, fake) as s:
        (started,) = await run_steps(s, fake, step("bash", command=loop(token), background=True))
        assert "bg1" in started and await s.wait_for(lambda: procs_with(token), 5)
        await s.client.shutdown_async(None)  # the sessions close; no `exit` yet, so no sweep of the server's
        assert await gone(token, 2.0), f"still running after shutdown: {procs_with(token)}"
        s.client.exit(None)  # the end the harness would give it, after a shutdown of its own
        await asyncio.wait_for(server_process(s).wait(), 10)
