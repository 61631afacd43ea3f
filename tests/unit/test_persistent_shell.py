"""The session's persistent shell, exercised with real bash processes."""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from coder_ls.engine.shell import PersistentShell, ShellResult, become_subreaper

TIMEOUT = 10.0
CAP = 64 * 1024


@pytest.fixture
async def shell(tmp_path: Path) -> AsyncIterator[PersistentShell]:
    sh = PersistentShell(tmp_path)
    yield sh
    await sh.close()


async def run(sh: PersistentShell, command: str, *, timeout: float = TIMEOUT, cap: int = CAP) -> ShellResult:
    return await sh.run(command, on_output=lambda _chunk: None, timeout=timeout, max_output_bytes=cap)


def living_members(pgid: int) -> list[int]:
    """Pids in the process group that are not yet dead (zombies count as dead)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return []
    living = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            living.append(int(stat.parent.name))
    return living


async def wait_group_dead(pgid: int, within: float) -> None:
    """Every process of the group has died (it may still await reaping)."""
    deadline = time.monotonic() + within
    while living_members(pgid):
        if time.monotonic() > deadline:
            pytest.fail(f"process group {pgid} still has living members after {within}s")
        await asyncio.sleep(0.002)


async def wait_group_gone(pgid: int, within: float) -> None:
    """`killpg(pgid, 0)` fails: the group no longer exists at all.

    Zombies of orphaned grandchildren are reaped by PID 1, and some container
    inits only do that every couple of seconds, hence the generous windows.
    """
    deadline = time.monotonic() + within
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"process group {pgid} still exists after {within}s")
        await asyncio.sleep(0.01)


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class FirstLine:
    """An on_output sink that signals once the first line (here: a pid) arrived."""

    def __init__(self) -> None:
        self.text = ""
        self.ready = asyncio.Event()

    def __call__(self, chunk: str) -> None:
        self.text += chunk
        if "\n" in self.text:
            self.ready.set()

    @property
    def pid(self) -> int:
        return int(self.text.split("\n", 1)[0])


async def test_cd_carries_over_to_the_next_command(shell: PersistentShell, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    first = await run(shell, "cd sub")
    assert first.exit_code == 0
    assert first.cwd == str(tmp_path / "sub")
    result = await run(shell, "pwd")
    assert result.output == f"{tmp_path / 'sub'}\n"
    assert shell.cwd == tmp_path / "sub"


async def test_exported_variables_carry_over_and_unset_sticks(shell: PersistentShell) -> None:
    await run(shell, "export FOO=1 'BAR=two words'")
    assert (await run(shell, 'echo "$FOO|$BAR"')).output == "1|two words\n"
    await run(shell, "unset FOO")
    assert (await run(shell, 'echo "[${FOO-unset}]"')).output == "[unset]\n"


async def test_the_shell_is_bash_with_a_quiet_environment(shell: PersistentShell) -> None:
    result = await run(shell, '[[ -n $BASH_VERSION ]] && echo "$TERM $PAGER $GIT_PAGER"')
    assert result.output == "dumb cat cat\n"


async def test_exit_reports_its_code_and_the_next_command_keeps_cwd_and_exports(
    shell: PersistentShell, tmp_path: Path
) -> None:
    (tmp_path / "sub").mkdir()
    await run(shell, "cd sub && export KEEP=yes")
    result = await run(shell, "echo bye; exit 3")
    assert (result.exit_code, result.output) == (3, "bye\n")
    after = await run(shell, 'echo "$KEEP $PWD"')
    assert after.exit_code == 0
    assert after.output == f"yes {tmp_path / 'sub'}\n"


async def test_a_command_killed_by_a_signal_reports_128_plus_the_signal(shell: PersistentShell) -> None:
    await run(shell, "export X=before")
    result = await run(shell, "export X=after; kill -9 $$")
    assert result.exit_code == 137
    # The killed command never finished, so the state of the last one that did stays.
    assert (await run(shell, "echo $X")).output == "before\n"


async def test_stdout_and_stderr_are_interleaved_in_order(shell: PersistentShell) -> None:
    result = await run(shell, "echo one; echo two >&2; echo three; echo four >&2")
    assert result.output == "one\ntwo\nthree\nfour\n"


async def test_stdin_is_empty_so_readers_do_not_hang(shell: PersistentShell) -> None:
    result = await run(shell, 'cat; read -r line; echo "read=$?"', timeout=5)
    assert result.output == "read=1\n"
    assert not result.timed_out


async def test_output_is_streamed_while_the_command_runs(shell: PersistentShell) -> None:
    seen: list[tuple[float, str]] = []
    start = time.monotonic()
    result = await shell.run(
        "echo first; sleep 0.5; echo second",
        on_output=lambda chunk: seen.append((time.monotonic() - start, chunk)),
        timeout=TIMEOUT,
        max_output_bytes=CAP,
    )
    finished = time.monotonic() - start
    assert "".join(chunk for _, chunk in seen) == result.output == "first\nsecond\n"
    first_at = next(at for at, chunk in seen if "first" in chunk)
    assert finished - first_at >= 0.4


async def test_output_is_capped_keeping_the_head_and_saying_how_much_was_dropped(
    shell: PersistentShell,
) -> None:
    chunks: list[str] = []
    result = await shell.run(
        "head -c 100000 /dev/zero | tr '\\0' x; echo done >&2",
        on_output=chunks.append,
        timeout=TIMEOUT,
        max_output_bytes=1000,
    )
    assert result.truncated
    assert result.exit_code == 0
    assert result.output.startswith("x" * 1000 + "\n[output truncated: 99005 bytes omitted]")
    assert "done" not in result.output
    assert "".join(chunks) == result.output


async def test_a_flood_of_output_does_not_block_the_command(shell: PersistentShell) -> None:
    start = time.monotonic()
    result = await run(shell, "yes | head -c 20000000; echo end", cap=100)
    assert result.exit_code == 0 and result.truncated
    assert time.monotonic() - start < 5


async def test_truncation_never_splits_a_multibyte_character(shell: PersistentShell) -> None:
    # 2-byte characters with an odd cap: the cut must fall before the last partial one.
    result = await run(shell, "for i in $(seq 2000); do printf 'é'; done", cap=1001)
    head = result.output.split("\n[output truncated", 1)[0]
    assert head == "é" * 500
    assert "\ufffd" not in result.output
    assert "[output truncated: 3000 bytes omitted]" in result.output


async def test_a_character_split_across_writes_is_decoded_whole(shell: PersistentShell) -> None:
    chunks: list[str] = []
    result = await shell.run(
        r"printf '\xe2\x82'; sleep 0.2; printf '\xac\n'",
        on_output=chunks.append,
        timeout=TIMEOUT,
        max_output_bytes=CAP,
    )
    assert result.output == "€\n"
    assert all("\ufffd" not in chunk for chunk in chunks)


async def test_timeout_kills_the_whole_group_and_keeps_the_output(shell: PersistentShell) -> None:
    sink = FirstLine()
    start = time.monotonic()
    result = await shell.run(
        "echo $$; echo started; sleep 100 & bash -c 'sleep 100; true' & wait",
        on_output=sink,
        timeout=0.5,
        max_output_bytes=CAP,
    )
    assert time.monotonic() - start < 10  # not the 100 s the sleeps would take (10: a loaded machine)
    assert result.timed_out
    assert result.exit_code is None
    assert "started\n" in result.output
    await wait_group_gone(sink.pid, within=5.0)


async def test_cancelling_kills_the_group_quickly_and_propagates(shell: PersistentShell) -> None:
    sink = FirstLine()
    task = asyncio.create_task(
        shell.run(
            "echo $$; sleep 100 & bash -c 'sleep 100; true'",
            on_output=sink,
            timeout=TIMEOUT,
            max_output_bytes=CAP,
        )
    )
    await asyncio.wait_for(sink.ready.wait(), 5)
    await asyncio.sleep(0.1)  # let the grandchildren start
    assert len(living_members(sink.pid)) >= 4  # bash, sleep, bash -c, its sleep
    start = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_group_dead(sink.pid, within=0.1)
    assert time.monotonic() - start < 0.5
    await wait_group_gone(sink.pid, within=5.0)
    # The shell is still usable afterwards.
    assert (await run(shell, "echo again")).output == "again\n"


@pytest.fixture
def subreaper() -> Iterator[None]:
    if not become_subreaper():
        pytest.skip("PR_SET_CHILD_SUBREAPER is not available")
    yield
    become_subreaper(False)


@pytest.mark.usefixtures("subreaper")
async def test_as_a_subreaper_a_cancelled_group_is_gone_when_cancel_returns(shell: PersistentShell) -> None:
    sink = FirstLine()
    task = asyncio.create_task(
        shell.run(
            "echo $$; sleep 100 & bash -c 'sleep 100; true' & wait",
            on_output=sink,
            timeout=TIMEOUT,
            max_output_bytes=CAP,
        )
    )
    await asyncio.wait_for(sink.ready.wait(), 5)
    await asyncio.sleep(0.1)
    start = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    with pytest.raises(ProcessLookupError):
        os.killpg(sink.pid, 0)
    assert time.monotonic() - start < 0.1


@pytest.mark.usefixtures("subreaper")
async def test_as_a_subreaper_close_also_kills_background_jobs_with_redirected_output(tmp_path: Path) -> None:
    sh = PersistentShell(tmp_path)
    result = await run(sh, "sleep 100 >/dev/null 2>&1 & echo $!")
    pid = int(result.output.split()[0])
    await run(sh, "true")
    assert pid_alive(pid)
    await sh.close()
    assert not pid_alive(pid)


async def test_leaving_the_workspace_resets_the_cwd_and_says_so(shell: PersistentShell, tmp_path: Path) -> None:
    outside = tmp_path.parent
    result = await run(shell, f"cd {outside} && echo moved")
    assert result.output.startswith("moved\n")
    assert f"[cwd reset to the workspace root: {outside} is outside the workspace]" in result.output
    assert result.cwd == str(tmp_path)
    assert (await run(shell, "pwd")).output == f"{tmp_path}\n"


async def test_a_symlink_out_of_the_workspace_counts_as_leaving(shell: PersistentShell, tmp_path: Path) -> None:
    (tmp_path / "escape").symlink_to(tmp_path.parent)
    result = await run(shell, "cd escape")
    assert "[cwd reset to the workspace root" in result.output
    assert (await run(shell, "pwd")).output == f"{tmp_path}\n"


async def test_a_vanished_cwd_falls_back_inside_the_workspace(shell: PersistentShell, tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    await run(shell, "cd a/b")
    shutil.rmtree(tmp_path / "a" / "b")
    result = await run(shell, "pwd")
    assert result.exit_code == 0
    assert result.output.endswith(f"{tmp_path / 'a'}\n")
    assert "no longer exists" in result.output


async def test_concurrent_runs_are_serialized(shell: PersistentShell, tmp_path: Path) -> None:
    slow = asyncio.create_task(run(shell, "echo start >> log; sleep 0.3; echo end >> log"))
    await asyncio.sleep(0.05)
    fast = asyncio.create_task(run(shell, "echo fast >> log"))
    await asyncio.gather(slow, fast)
    assert (tmp_path / "log").read_text() == "start\nend\nfast\n"


async def test_a_background_job_does_not_hold_up_the_command_and_close_kills_it(
    tmp_path: Path,
) -> None:
    sh = PersistentShell(tmp_path)
    start = time.monotonic()
    result = await run(sh, "sleep 100 & echo $!")
    assert time.monotonic() - start < 2
    pid = int(result.output.split()[0])
    assert pid_alive(pid)
    await sh.close()
    deadline = time.monotonic() + 2
    while pid_alive(pid):
        if time.monotonic() > deadline:
            pytest.fail(f"background job {pid} survived close()")
        await asyncio.sleep(0.01)
    with pytest.raises(RuntimeError):
        await run(sh, "true")


async def test_close_kills_a_running_command(tmp_path: Path) -> None:
    sh = PersistentShell(tmp_path)
    sink = FirstLine()
    task = asyncio.create_task(sh.run("echo $$; sleep 100", on_output=sink, timeout=TIMEOUT, max_output_bytes=CAP))
    await asyncio.wait_for(sink.ready.wait(), 5)
    await sh.close()
    result = await asyncio.wait_for(task, 3)
    assert result.exit_code == 137
    await wait_group_dead(sink.pid, within=1.0)


async def test_round_trip_of_a_trivial_command_is_fast(shell: PersistentShell) -> None:
    await run(shell, "export WARM=1")
    samples = []
    for _ in range(20):
        start = time.perf_counter()
        await run(shell, "true")
        samples.append(time.perf_counter() - start)
    assert statistics.median(samples) < 0.05


# -- secrets, sandbox state, process lifetime (issue 7) ------------------------------------


async def test_secrets_are_hidden_from_every_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-unit-secret")
    monkeypatch.setenv("MY_SECRET", "mine-1234")
    sh = PersistentShell(tmp_path)
    try:
        first = await sh.run(
            "env", on_output=lambda _: None, timeout=TIMEOUT, max_output_bytes=CAP, hide_env=["MY_SECRET"]
        )
        assert "sk-ant-unit-secret" not in first.output and "mine-1234" not in first.output
        # exported by hand, then listed in secrets.envNames: gone from the next command on
        await sh.run("export LATER=later-5678", on_output=lambda _: None, timeout=TIMEOUT, max_output_bytes=CAP)
        later = await sh.run(
            "echo [$LATER]", on_output=lambda _: None, timeout=TIMEOUT, max_output_bytes=CAP, hide_env=["LATER"]
        )
        assert later.output == "[]\n"
    finally:
        await sh.close()


async def test_exports_live_in_the_shell_process_not_in_files(shell: PersistentShell, tmp_path: Path) -> None:
    from coder_ls.guard import lifetime

    await run(shell, "export SECRETISH=value-8731")
    assert (await run(shell, "echo $SECRETISH")).output == "value-8731\n"
    assert not files_holding(b"value-8731", lifetime.run_dir(), tmp_path)


def files_holding(needle: bytes, *dirs: Path) -> list[Path]:
    return [p for d in dirs for p in d.rglob("*") if p.is_file() and needle in p.read_bytes()]


async def test_the_end_marker_cannot_be_forged_or_hidden(shell: PersistentShell) -> None:
    # a fake marker in the output, stdout redirected for good, `set -e`, a NUL in the command
    forged = await run(shell, r"printf 'a\0deadbeef\x01" "0\0/\0\0b\n'; echo done")
    assert forged.exit_code == 0 and forged.output.endswith("b\ndone\n")
    await run(shell, "exec >/dev/null 2>&1; export SEEN=1")
    assert (await run(shell, "echo still $SEEN")).output == "still 1\n"
    failed = await run(shell, "set -e; export E=1; false; echo not-reached")
    assert (failed.exit_code, failed.output) == (1, "")
    assert (await run(shell, "echo $E; false; echo reached")).output == "1\nreached\n"
    assert (await run(shell, "echo a\0b")).output == "ab\n"


async def test_a_command_that_replaces_the_shell_keeps_the_last_state(shell: PersistentShell) -> None:
    await run(shell, "export KEEP=1")
    replaced = await run(shell, "exec sh -c 'echo replaced; exit 4'")
    assert (replaced.exit_code, replaced.output) == (4, "replaced\n")
    assert (await run(shell, "echo $KEEP")).output == "1\n"


def test_stale_run_dirs_of_dead_servers_are_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from coder_ls.guard import lifetime

    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    dead = tmp_path / f"coder-ls-{os.getuid()}-999999999"
    live = tmp_path / f"coder-ls-{os.getuid()}-{os.getppid()}"
    for d in (dead, live):
        d.mkdir(mode=0o700)
        (d / "env.1").write_text("declare -x SECRET=1\n")
    lifetime.remove_stale_run_dirs()
    assert not dead.exists() and live.exists()


async def test_a_sandboxed_shell_keeps_its_state_and_an_unsandboxed_one_never_sees_it(tmp_path: Path) -> None:
    from coder_ls.engine.agentshell import AgentShell
    from coder_ls.guard import sandbox
    from coder_ls.protocol.config import SandboxConfig

    if sandbox.backend() != "bwrap":
        pytest.skip("bubblewrap does not work here (or another backend is forced)")
    agent, user = AgentShell(tmp_path), PersistentShell(tmp_path)
    try:
        box = agent.sandbox_for(SandboxConfig())
        assert box is not None

        async def boxed(command: str) -> ShellResult:
            return await agent.run(command, on_output=lambda _: None, timeout=TIMEOUT, max_output_bytes=CAP, box=box)

        out = await boxed("mkdir -p d && cd d && export KEEP=yes; echo $TMPDIR; touch /etc/x-coder 2>&1")
        assert out.output.startswith("/tmp\n") and "Read-only file system" in out.output
        pid = agent.pid
        again = await boxed('echo "$KEEP $XDG_CACHE_HOME" && pwd')
        assert again.output == f"yes {box.cache}\n{tmp_path / 'd'}\n" and agent.pid == pid  # the same process
        mine = await run(user, 'echo "${KEEP-unset} ${TMPDIR-unset}" && pwd')
        assert box.cache not in mine.output
        assert mine.output == f"unset {os.environ.get('TMPDIR', 'unset')}\n{tmp_path}\n"
    finally:
        await agent.close()
        await user.close()


def test_no_sandbox_warns_once_per_host(monkeypatch: pytest.MonkeyPatch) -> None:
    from coder_ls.agent.tools import bash
    from coder_ls.guard import sandbox
    from coder_ls.protocol.config import Config

    shown: list[tuple[str, str]] = []

    class Host:
        def show_message(self, kind: str, message: str) -> None:
            shown.append((kind, message))

    monkeypatch.setattr(sandbox, "available", lambda: False)
    from coder_ls.engine.agentshell import AgentShell

    host, sh = Host(), AgentShell(Path("/"))
    for _ in range(3):
        assert bash.sandbox_options(sh, Config(), host)["box"] is None  # type: ignore[arg-type]
    assert [k for k, _ in shown] == ["warning"]


def test_the_backend_is_bwrap_then_landlock_then_none(monkeypatch: pytest.MonkeyPatch) -> None:
    from coder_ls.guard import sandbox

    monkeypatch.setattr(sandbox, "bwrap_path", lambda: "/usr/bin/bwrap")
    monkeypatch.setattr(sandbox, "landlock_abi", lambda: 7)
    monkeypatch.delenv("CODER_SANDBOX_BACKEND", raising=False)
    assert sandbox.backend() == "bwrap"
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    assert sandbox.backend() == "landlock"
    monkeypatch.setattr(sandbox, "landlock_abi", lambda: 0)
    assert sandbox.backend() == "none" and not sandbox.available()
    monkeypatch.setattr(sandbox, "landlock_abi", lambda: 7)
    monkeypatch.setenv("CODER_SANDBOX_BACKEND", "bwrap")  # forced but not working here: none
    assert sandbox.backend() == "none"
    monkeypatch.setenv("CODER_SANDBOX_BACKEND", "none")
    assert sandbox.backend() == "none"


def test_landlock_grants_leave_the_protected_paths_out(tmp_path: Path) -> None:
    from coder_ls.guard import sandbox

    root = tmp_path / "ws"
    for d in ("src", ".git/hooks", ".git/objects", ".coder"):
        (root / d).mkdir(parents=True)
    for f in ("README.md", ".git/config", ".git/HEAD"):
        (root / f).write_text("x\n")
    (root / "link").symlink_to("/etc")
    box = sandbox.Sandbox(str(root), "workspace-write", False, (), str(tmp_path / "t"), str(tmp_path / "c"), "landlock")
    dirs, files = sandbox.landlock_grants(box)
    granted = {Path(p).relative_to(root).as_posix() for p in (*dirs, *files) if Path(p).is_relative_to(root)}
    assert granted == {"src", "README.md"}  # `.git` whole and `.coder` stay read-only
    read_only = sandbox.Sandbox(str(root), "read-only", False, (), str(tmp_path / "t"), str(tmp_path / "c"), "landlock")
    dirs, files = sandbox.landlock_grants(read_only)
    assert not [p for p in (*dirs, *files) if Path(p).is_relative_to(root)]


# What one command may do to the shell it runs in, gathered from shell scripts and from the
# bash manual's list of builtins, options and special variables, not from this module's loop:
# the next commands must still get their own output, exit code and state, each at once.
SHELL_SETTINGS = [
    "IFS=$'\\n'",
    "IFS=,",
    "IFS=",
    "unset IFS",
    "trap 'echo TRAPPED' ERR",
    "set -eE; trap 'echo TRAPPED' ERR",
    "set -T; trap 'echo TRAPPED' DEBUG",
    "trap 'echo TRAPPED' DEBUG",
    "trap 'echo TRAPPED' RETURN; set -o functrace",
    "trap 'echo TRAPPED' EXIT",
    "readonly __coder_x=1",
    "set -u",
    "set -x",
    "set -o posix",
    "set -f",
    "set -a",
    "set -o pipefail",
    "shopt -s failglob nullglob extglob lastpipe xpg_echo",
    "PATH=",
    "readonly PATH",
    "umask 777",
    "exec >/dev/null 2>&1",
    "exec 3>/dev/null",
    "exec 0</dev/null",
    "printf() { :; }",
    "read() { return 1; }",
    "eval() { :; }",
    "unset() { :; }",
    "export() { :; }",
    "cd() { return 1; }",
    "'['() { return 1; }",
    "enable -n cd",
    "enable -n export",
    "enable -n set",
    "alias printf=false; shopt -s expand_aliases",
    "PROMPT_COMMAND='echo TRAPPED'",
    "sleep 100 &",
    "exit 4",
    "kill -9 $$",
    "exec sh",
]


@pytest.mark.parametrize("setting", SHELL_SETTINGS)
async def test_what_a_command_does_to_its_shell_never_garbles_the_next_ones(tmp_path: Path, setting: str) -> None:
    sh = PersistentShell(tmp_path)
    try:
        await run(sh, "export KEEP=1")
        await run(sh, setting, timeout=5)
        started = time.monotonic()
        failed = await run(sh, "echo ok:$KEEP; false", timeout=5)
        passed = await run(sh, "echo again", timeout=5)
        took = time.monotonic() - started
    finally:
        await sh.close()
    # the agent's own traps still act on its own commands, as in a terminal: ERR after `false`,
    # DEBUG before each simple command (`echo`, `false`), and nothing of the loop's words
    if "ERR" in setting:
        own, again = "ok:1\nTRAPPED\n", "again\n"
    elif "DEBUG" in setting:
        own, again = "TRAPPED\nok:1\nTRAPPED\n", "TRAPPED\nagain\n"
    else:
        own, again = "ok:1\n", "again\n"
    assert (failed.output, failed.exit_code) == (own, 1), failed
    assert (passed.output, passed.exit_code) == (again, 0), passed
    assert took < 2.0, f"{setting!r}: the next two commands took {took:.1f} s"


@pytest.mark.parametrize(
    "closer", ["exec 9>&-", "exec 9>/dev/null", "exec 9>mine.txt", "echo before; exec 9>&-; sleep 0.2; echo after"]
)
@pytest.mark.parametrize("boxed", [False, True], ids=["plain", "sandboxed"])
async def test_a_command_that_closes_the_frames_output_ends_when_it_does(
    tmp_path: Path, closer: str, boxed: bool
) -> None:
    """fd 9 is where the end marker goes: a command that closes it (or points it elsewhere)
    left a shell that could never say it finished, and the call waited its whole timeout.
    Now the shell ends when the command does, with its exit code, and the next command
    gets a new shell with the state of the last command that finished (the same in the
    sandbox, where bubblewrap also holds the output pipe)."""
    from coder_ls.engine.agentshell import AgentShell
    from coder_ls.guard import sandbox
    from coder_ls.protocol.config import SandboxConfig

    if boxed and sandbox.backend() == "none":
        pytest.skip("no sandbox backend works here")
    (tmp_path / "d").mkdir()
    sh = AgentShell(tmp_path)
    box = sh.sandbox_for(SandboxConfig()) if boxed else None

    async def run_in(command: str, timeout: float = TIMEOUT) -> ShellResult:
        return await sh.run(command, on_output=lambda _: None, timeout=timeout, max_output_bytes=CAP, box=box)

    try:
        await run_in("cd d && export KEEP=1")
        started = time.monotonic()
        lost = await run_in(closer)
        took = time.monotonic() - started
        after = await run_in('echo "ok:$KEEP $PWD"')
    finally:
        await sh.close()
    assert took < 2.0 and not lost.timed_out and lost.exit_code == 0, (took, lost)
    assert lost.output == ("before\nafter\n" if closer.startswith("echo before") else ""), lost
    assert (after.output, after.exit_code) == (f"ok:1 {tmp_path / 'd'}\n", 0), after
    if "mine.txt" in closer:  # the command's own file gets nothing of ours
        assert (tmp_path / "d" / "mine.txt").read_bytes() == b""
