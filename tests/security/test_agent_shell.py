"""Issues 16 and 25: the agent's persistent sandboxed shell, attacked. The shell lives
across calls now; these check that living longer gives a command nothing more: the
sandbox holds after a restart, the agent cannot reach the user's shell process, and a
rerun outside the sandbox does not take the agent's environment with it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "e2e_agent"))

from agent_e2e import APP, api_env, calls, result_text, tool_call, tool_results
from anthropic_server import FakeAnthropicServer, reply
from harness import Session, init_git, lsp_session
from lsprotocol import types

from coder_ls.guard import sandbox

pytestmark = [
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
    pytest.mark.skipif(sandbox.bwrap_path() is None, reason="bubblewrap does not work on this machine"),
]


def _exists(path: str) -> bool:
    return os.path.exists(path)


def configure(s: Session, **settings: object) -> None:
    s.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"coder": {"permissions": "yolo", **settings}})
    )


async def agent_runs(s: Session, fake: FakeAnthropicServer, *commands: str | tuple[str, float]) -> list[str]:
    ids = [f"toolu_as{len(fake.requests)}_{i}" for i in range(len(commands))]
    for c, i in zip(commands, ids, strict=True):
        command, extra = (c, {}) if isinstance(c, str) else (c[0], {"timeout": c[1]})
        fake.push(calls(tool_call("bash", {"command": command, **extra}, i)))
    fake.push(reply("done"))
    result = await s.execute("coder.input", {"text": "go"})
    assert result["status"] == "completed", result
    last = tool_results(fake.message_requests[-1])
    return [result_text(last[i]) for i in ids]


async def test_a_restarted_shell_is_as_sandboxed_as_the_first(tmp_path, fake, outside):
    root = init_git(tmp_path / "ws", {"app.py": APP})
    probe = "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), 3); print('CONNECTED')\""
    async with lsp_session(root, env=api_env(fake)) as s:
        configure(s)
        outs = await agent_runs(
            s,
            fake,
            f"echo first > {outside}/a.txt; echo rc=$?; mkdir box; export BASH_ENV=$PWD/box/evil.sh",
            (f"echo 'touch box/PWNED; echo evil > {outside}/c.txt' > box/evil.sh; export LOST=1; sleep 30", 1.0),
            f"echo second > {outside}/b.txt; echo rc=$?; bash -c true; {probe}; echo inside > box/in.txt; echo L=$LOST",
        )
    assert "Read-only file system" in outs[0] and "timed out" in outs[1]
    assert "Read-only file system" in outs[2] and "CONNECTED" not in outs[2], outs[2]
    assert "L=\n" in outs[2]  # what the killed command exported died with it
    assert not (outside / "c.txt").exists()
    assert not (outside / "a.txt").exists() and not (outside / "b.txt").exists()
    # BASH_ENV ran, in the box
    assert (root / "box" / "in.txt").read_text() == "inside\n" and (root / "box" / "PWNED").exists()


async def test_the_agent_cannot_see_or_kill_the_users_shell(tmp_path, fake):
    root = init_git(tmp_path / "ws", {"app.py": APP})
    async with lsp_session(root, env=api_env(fake)) as s:
        configure(s)
        mine = await s.execute("coder.shell", {"command": "export MINE=still-here; echo $$"})
        pid = int(mine["reply"].split()[0])
        (out,) = await agent_runs(
            s, fake, f"kill -9 {pid}; echo kill=$?; cat /proc/{pid}/environ 2>&1 | head -c 200; echo; ls /proc/{pid}"
        )
        after = await s.execute("coder.shell", {"command": "echo $MINE $$"})
    assert "kill=1" in out and "still-here" not in out, out
    assert after["reply"] == f"still-here {pid}\n", after


async def test_a_rerun_outside_the_sandbox_does_not_take_the_agents_environment(tmp_path, fake, outside):
    root = init_git(tmp_path / "ws", {"app.py": APP})
    (root / "sub").mkdir()
    target = outside / "approved.txt"
    async with lsp_session(root, env=api_env(fake)) as s:
        configure(s)
        s.answer_question = lambda p: "Run outside the sandbox"
        _, out = await agent_runs(
            s,
            fake,
            f"cd sub && printf 'touch {outside}/PWNED\\n' > evil.sh && export BASH_ENV=$PWD/evil.sh MARK=agent",
            f'echo "[${{MARK-none}}] $PWD" > {target}',
        )
        (after,) = await agent_runs(s, fake, 'echo "[$MARK] $PWD"')
    assert "approved running it again outside" in out, out
    assert target.read_text() == f"[none] {root}/sub\n"  # the agent's cwd, not its environment
    assert not (outside / "PWNED").exists()
    assert f"[agent] {root}/sub" in after  # and the agent's own shell kept both


async def test_landlock_a_top_level_entry_made_after_the_shell_started_becomes_writable(tmp_path, fake):
    """Landlock grants the workspace entry by entry when the shell starts; the long-lived
    shell is restarted (state kept) when the entries change, and only then."""
    from coder_ls.guard.landlock import abi

    if abi() < 1:
        pytest.skip("this kernel has no Landlock")
    root = init_git(tmp_path / "ws", {"app.py": APP})
    env = {**api_env(fake), "CODER_SANDBOX_BACKEND": "landlock"}
    async with lsp_session(root, env=env) as s:
        configure(s)
        (first,) = await agent_runs(s, fake, "export KEEP=1; PLAIN=2; echo ok > app.py; echo rc=$?")
        (root / "later").mkdir()  # the user makes a folder
        (second,) = await agent_runs(s, fake, 'echo made > later/x.txt; echo "rc=$? $KEEP ${PLAIN-gone}"')
        (third,) = await agent_runs(s, fake, 'PLAIN=3; echo "$PLAIN"')
        (fourth,) = await agent_runs(s, fake, 'echo "${PLAIN-gone}"; echo no > /var/tmp/coder-ll-x 2>&1')
    assert "rc=0" in first
    assert "rc=0 1 gone" in second, second  # restarted: exports kept, plain variables not
    assert (root / "later" / "x.txt").read_text() == "made\n"
    assert "3" in third and fourth.startswith("3\n"), fourth  # no restart when nothing changed
    assert not _exists("/var/tmp/coder-ll-x")
