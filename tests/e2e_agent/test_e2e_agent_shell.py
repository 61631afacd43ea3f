"""Issues 16 and 25: the agent's shell is one persistent sandboxed bash per session, apart
from the user's `!` shell. `cd`, exported variables (and plain variables and functions: the
same process) carry from one agent call to the next; nothing crosses into the user's
shell or back; a timeout or an interrupt kills the command and the next call has a working
shell in the same place. A real LSP client drives the real server; the real SDK talks to
the strict fake endpoint."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from agent_e2e import APP, api_env, calls, result_text, tool_call, tool_results
from anthropic_server import FakeAnthropicServer, reply
from harness import Session, init_git, lsp_session
from lsprotocol import types

pytestmark = pytest.mark.filterwarnings("ignore:Unknown progress token")
_ids = iter(range(1, 10_000))


@contextlib.asynccontextmanager
async def server(
    root: Path, fake: FakeAnthropicServer, settings: dict[str, Any] | None = None
) -> AsyncIterator[Session]:
    async with lsp_session(root, env=api_env(fake)) as s:
        s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"coder": {"permissions": "yolo", **(settings or {})}})
        )
        yield s


def bash(command: str, **extra: Any) -> tuple[dict[str, Any], str]:
    call_id = f"toolu_sh{next(_ids)}"
    return calls(tool_call("bash", {"command": command, **extra}, call_id)), call_id


async def agent_runs(s: Session, fake: FakeAnthropicServer, *commands: str | tuple[str, float]) -> list[str]:
    """One turn in which the model runs `commands` with bash, one per step; their outputs."""
    steps = [bash(c) if isinstance(c, str) else bash(c[0], timeout=c[1]) for c in commands]
    fake.push(*[step for step, _ in steps], reply("done"))
    result = await s.execute("coder.input", {"text": "go"})
    assert result["status"] == "completed", result
    last = tool_results(fake.message_requests[-1])
    return [result_text(last[call_id]) for _, call_id in steps]


async def test_cd_exports_and_functions_carry_between_agent_calls_in_one_process(tmp_path):
    root = init_git(tmp_path / "ws", {"app.py": APP})
    with FakeAnthropicServer() as fake:
        async with server(root, fake) as s:
            first, second = await agent_runs(
                s, fake, "mkdir -p sub && cd sub && export AGENT_VAR=kept && PLAIN=p && f() { echo fn-$1; }", "true"
            )
            (third,) = await agent_runs(s, fake, 'echo "$AGENT_VAR $PLAIN $(f x) $PWD"')
    assert "exit code: 0" in first and "exit code: 0" in second
    # a plain variable and a function survive only in the same process, not through state files
    assert f"kept p fn-x {root}/sub" in third, third


async def test_nothing_the_agent_exports_reaches_the_users_shell(tmp_path):
    """Issue 16, boundary 2: HOME with a hostile .gitconfig, PYTHONPATH with a
    sitecustomize.py, CDPATH that sends the user's `cd sub` outside the workspace."""
    root = init_git(tmp_path / "ws", {"app.py": APP})
    (root / "sub").mkdir()
    (root / "sub" / "keep.txt").write_text("mine\n")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "sub").mkdir(parents=True)
    (elsewhere / "sub" / "victim.txt").write_text("victim\n")
    with FakeAnthropicServer() as fake:
        async with server(root, fake) as s:
            (out,) = await agent_runs(
                s,
                fake,
                "mkdir -p h pp && printf '[core]\\n\\tfsmonitor = touch PWNED_GIT\\n' > h/.gitconfig && "
                'echo \'open("PWNED_PY", "w")\' > pp/sitecustomize.py && '
                f"export HOME=$PWD/h PYTHONPATH=$PWD/pp CDPATH={elsewhere} MARK=agent",
            )
            assert "exit code: 0" in out
            mine = await s.execute(
                "coder.shell",
                {
                    "command": 'echo "[${MARK-none}] $HOME"; git status --short >/dev/null; python3 -c pass; '
                    "cd sub && pwd && rm -f *.txt"
                },
            )
            assert mine["status"] == "completed", mine
            # the agent still has its own
            (agent_after,) = await agent_runs(s, fake, 'echo "[$MARK] $HOME"')
    assert "[none]" in mine["reply"] and f"{root}/h" not in mine["reply"], mine
    assert f"{root}/sub\n" in mine["reply"], mine
    assert (elsewhere / "sub" / "victim.txt").read_text() == "victim\n"
    assert not (root / "sub" / "keep.txt").exists()  # the user's own rm ran where the user is
    assert not (root / "PWNED_GIT").exists() and not (root / "PWNED_PY").exists()
    assert f"[agent] {root}/h" in agent_after


async def test_the_users_exports_and_cwd_do_not_reach_the_agent(tmp_path):
    root = init_git(tmp_path / "ws", {"app.py": APP})
    (root / "mine").mkdir()
    with FakeAnthropicServer() as fake:
        async with server(root, fake) as s:
            await s.execute("coder.shell", {"command": "cd mine && export USER_ONLY=u"})
            (out,) = await agent_runs(s, fake, 'echo "[${USER_ONLY-none}] $PWD"')
            user = await s.execute("coder.shell", {"command": 'echo "[$USER_ONLY] $PWD"'})
    assert f"[none] {root}\n" in out, out
    assert f"[u] {root}/mine" in user["reply"]


async def test_a_command_killed_by_its_timeout_leaves_a_working_shell(tmp_path):
    root = init_git(tmp_path / "ws", {"app.py": APP})  # the sandboxed `mkdir -p d` makes it at the top
    with FakeAnthropicServer() as fake:
        async with server(root, fake) as s:
            outs = await agent_runs(
                s, fake, "mkdir -p d && cd d && export KEEP=1", ("echo started; sleep 30", 1.0), 'echo "$KEEP $PWD"'
            )
            (later,) = await agent_runs(s, fake, "echo later $KEEP")
    assert "started" in outs[1] and "timed out after 1 s" in outs[1], outs[1]
    assert f"1 {root}/d" in outs[2], outs[2]
    assert "later 1" in later


async def test_an_interrupt_kills_the_command_and_the_next_turn_has_a_shell(tmp_path):
    root = init_git(tmp_path / "ws", {"app.py": APP})
    with FakeAnthropicServer() as fake:
        async with server(root, fake) as s:
            await agent_runs(s, fake, "export KEEP=2")
            step, _ = bash("echo started; sleep 30")
            fake.push(step)
            token = "agent-shell-interrupt"
            _, answer = s.start("coder.input", {"text": "go"}, token=token)
            await s.wait_for(lambda: any("started" in e.get("chunk", "") for e in s.events_of("shellOutput")))
            s.cancel_progress(token)
            result = await asyncio.wait_for(answer, 10)
            assert result["status"] == "cancelled", result
            (after,) = await agent_runs(s, fake, "echo again $KEEP")
    assert "again 2" in after, after


async def test_what_one_call_does_to_the_shells_own_settings_leaves_later_outputs_clean(tmp_path):
    """A script's `IFS=$'\\n'` or `trap ... ERR`, left in the agent's shell by one call, is the
    agent's state and stays; it must not reach the loop that frames each command, whose own
    words then became error lines (`not a valid identifier`) and trap output in every later
    result, exit codes that were not the command's, or secrets left set."""
    root = init_git(tmp_path / "ws", {"app.py": APP})
    with FakeAnthropicServer() as fake:
        async with server(root, fake) as s:
            outs = await agent_runs(
                s,
                fake,
                "IFS=$'\\n'; trap 'echo TRAPPED' ERR",
                "echo clean",
                "false",
                'printf "%s|" $(printf "a b\\nc")',
            )
    assert outs[1].startswith("clean\n") and "identifier" not in outs[1] and "TRAPPED" not in outs[1], outs[1]
    # the agent's own trap still fires for its own failing command, once
    assert outs[2].count("TRAPPED") == 1 and "exit code: 1" in outs[2], outs[2]
    assert outs[3].startswith("a b|c|"), outs[3]  # its IFS is still the agent's


async def test_a_call_that_closes_the_shells_marker_fd_ends_with_it_not_at_its_timeout(tmp_path):
    """`exec 9>&-` (or 9 pointed at a file) leaves a shell that can never say a command ended:
    the call used to wait its whole timeout and read as timed out. It ends when the command
    does, in the sandbox too, and the next call has a shell with the last exports."""
    root = init_git(tmp_path / "ws", {"app.py": APP})
    with FakeAnthropicServer() as fake:
        async with server(root, fake) as s:
            outs = await agent_runs(
                s, fake, "mkdir d && cd d && export KEEP=1", ("exec 9>&-", 60.0), 'echo "ok:$KEEP $PWD"'
            )
    assert "timed out" not in outs[1] and "exit code: 0" in outs[1], outs[1]
    assert f"ok:1 {root}/d" in outs[2], outs[2]
