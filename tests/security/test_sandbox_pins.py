"""Issues 31 and 36: the agent's bubblewrap shell with the workspace writable whole, its top
included, and the protected paths held by pins and placeholders (`guard/pins.py`).

Real bubblewrap, real files, the real `AgentShell` driven in-process (the LSP path is in
`test_sandbox_home_e2e.py`). Everyday commands at the top must work; every protected name,
existing or absent, must stay unwritable and uncreatable whatever route a command takes;
placeholders must never show in `git status` and must be gone when the shell is; a pin
undone from the host must kill the sandbox at once."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "e2e_agent"))

from harness import init_git

from coder_ls.engine import agentshell
from coder_ls.engine.agentshell import AgentShell
from coder_ls.engine.shell import ShellResult
from coder_ls.guard import pins, protected, sandbox
from coder_ls.protocol.config import SandboxConfig

pytestmark = pytest.mark.skipif(sandbox.bwrap_path() is None, reason="bubblewrap does not work on this machine")

DIRS = {".git", ".coder", ".claude", ".vscode", ".idea", ".devcontainer", ".husky"}


class Agent:
    """The agent's shell of one session, in the default sandbox."""

    def __init__(self, root: Path, config: SandboxConfig | None = None, **kw: object) -> None:
        self.root = root
        self.shell = AgentShell(root, **kw)  # type: ignore[arg-type]
        self.box = self.shell.sandbox_for(config or SandboxConfig())
        assert self.box is not None and self.box.backend == "bwrap"

    async def __call__(self, command: str, timeout: float = 60) -> ShellResult:
        return await self.shell.run(
            command, on_output=lambda _: None, timeout=timeout, max_output_bytes=1 << 20, box=self.box
        )

    async def ok(self, command: str) -> str:
        result = await self(command)
        assert result.exit_code == 0, (command, result.output)
        return result.output


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", "")
    monkeypatch.setenv("CODER_SANDBOX_BACKEND", "bwrap")
    return tmp_path


@pytest.fixture
async def agent(env: Path) -> AsyncIterator[Agent]:
    root = init_git(env / "ws", {"README.md": "hello\n", "app.py": "print(1)\n", "src/lib.py": "x = 1\n"})
    a = Agent(root)
    try:
        yield a
    finally:
        await a.shell.close()


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def _git_status(root: Path) -> str:
    return _git(root, "status", "--porcelain", "--untracked-files=all")


async def test_everyday_commands_at_the_workspaces_top_run_sandboxed(agent: Agent) -> None:
    root = agent.root
    await agent.ok("sed -i s/hello/bye/ README.md")
    await agent.ok("echo notes > NOTES.md && mkdir build && touch build/out.o")
    await agent.ok("mv NOTES.md N2.md && cp N2.md N3.md && rm N3.md && ln -s N2.md link.md && cat link.md")
    await agent.ok(
        "python3 -m compileall -q . && python3 -c \"import json; json.dump({'a': 1}, open('data.json', 'w'))\""
    )
    await agent.ok("mkdir -p dist/x && rm -r dist && touch .gitignore .env.local && mv .env.local .env")
    assert (root / "README.md").read_text() == "bye\n"
    assert (root / "N2.md").read_text() == "notes\n" and (root / "link.md").is_symlink()
    assert (root / "build" / "out.o").exists() and (root / "data.json").read_text() == '{"a": 1}'
    assert list((root / "__pycache__").glob("app.*.pyc")) and not (root / "dist").exists()
    assert (root / ".env").exists() and not (root / "N3.md").exists()


def _attacks(name: str, i: int) -> list[str]:
    """Every route we know to write or create `name` at the top."""
    return [
        f"echo x > {name}",
        f"echo x >> {name}",
        f"printf x > t{i} && mv -f t{i} {name}; mv -fT t{i} {name}",
        f"python3 -c \"import os; open('u{i}', 'w').write('x'); os.rename('u{i}', '{name}')\"",
        f"rm -rf {name}; mkdir {name}; echo x > {name}/f",
        f"mkdir -p {name}/commands && echo x > {name}/commands/review.md",
        f"ln -sfn /etc/passwd {name}; ln -s evil {name}/ls",
        f"ln src/lib.py {name}/h; ln -f src/lib.py {name}",
        f"cp -r src {name}; cp src/lib.py {name}/lib.py; touch {name}/x",
        f"rmdir {name}; truncate -s 0 {name}; chmod 777 {name}; rm -f t{i} u{i}",
    ]


def _tree(path: Path) -> dict[str, bytes | str | None]:
    """What a path holds (name -> bytes, link target, or None for a folder)."""
    if not os.path.lexists(path):
        return {}
    if path.is_symlink():
        return {".": os.readlink(path)}
    if path.is_file():
        return {".": path.read_bytes()}
    out: dict[str, bytes | str | None] = {".": None}
    for base, dirs, files in os.walk(path):
        for n in dirs + files:
            p = Path(base, n)
            out[p.relative_to(path).as_posix()] = (
                os.readlink(p) if p.is_symlink() else p.read_bytes() if p.is_file() else None
            )
    return out


@pytest.mark.parametrize("existing", [False, True], ids=["absent", "existing"])
async def test_every_protected_name_stays_unwritable_and_uncreatable(agent: Agent, existing: bool) -> None:
    root = agent.root
    names = sorted(n for n in protected.PROTECTED if existing or n not in pins.UNHELD_WHEN_ABSENT)
    if existing:
        for name in names:
            if name in DIRS and name != ".git":
                (root / name).mkdir()
                (root / name / "settings.json").write_text("{}\n")
            elif name not in DIRS:
                (root / name).write_text("original\n")
    before = {n: _tree(root / n) for n in names}
    git_config = (root / ".git" / "config").read_bytes()
    lines = [a for i, n in enumerate(names) for a in _attacks(n, i)]
    lines += ["ln .git/config cfg && echo '[core] fsmonitor = x' >> cfg", "echo evil > .git/hooks/pre-commit"]
    # a background job that acts after the command returned, checked once it ran
    await agent.ok("(sleep 1; echo x > .mcp.json; mkdir -p .claude/commands; echo x > .envrc; mv README.md .husky) &")
    for chunk in range(0, len(lines), 10):
        await agent("; ".join(lines[chunk : chunk + 10]) + "; true")
    await asyncio.sleep(1.5)
    await agent.ok("echo still-here > src/after.txt")
    if not existing:  # the placeholders are invisible to git
        assert _git_status(root).splitlines() == ["?? src/after.txt"], _git_status(root)
    await agent.shell.close()
    after = {n: _tree(root / n) for n in names}
    assert after == before
    assert (root / ".git" / "config").read_bytes() == git_config
    assert not (root / "cfg").exists() and (root / "README.md").exists()


async def test_an_absent_gitmodules_gets_no_placeholder_and_an_existing_one_is_held(agent: Agent) -> None:
    """VS Code's git extension reads `.gitmodules` at every status and fails on a folder
    there (seen in the real editor): an absent one is left free, an existing one is pinned."""
    root = agent.root
    await agent.ok("test ! -e .gitmodules && echo free")
    assert not (root / ".gitmodules").exists()
    await agent.shell.close()
    (root / ".gitmodules").write_text("original\n")
    held = Agent(root)
    try:
        out = await held("echo x >> .gitmodules; rm -f .gitmodules; echo rc=$?")
        assert (root / ".gitmodules").read_text() == "original\n", out.output
    finally:
        await held.shell.close()


async def test_placeholders_are_gone_when_the_shell_closes_and_never_in_git_status(agent: Agent) -> None:
    root = agent.root
    await agent.ok("echo x > made.txt")
    held = [n for n in protected.PROTECTED if (root / n).is_dir() and not any((root / n).iterdir())]
    assert ".mcp.json" in held and ".envrc" in held  # empty folders, pinned
    _git(root, "add", "-A")
    staged = _git(root, "diff", "--cached", "--name-only")
    assert staged.split() == ["made.txt"], staged
    run = Path(os.environ["XDG_STATE_HOME"]) / "coder" / "run" / f"coder-ls-{os.getuid()}-{os.getpid()}"
    record = run / "placeholders.json"  # what the next server removes if this one is killed
    assert ".mcp.json" in record.read_text()
    (root / ".vscode" / "settings.json").write_text("{}\n")  # the user puts a file in one: theirs now
    await agent.shell.close()
    assert sorted(p.name for p in root.iterdir()) == [".git", ".vscode", "README.md", "app.py", "made.txt", "src"]
    assert ".mcp.json" not in record.read_text()


async def test_renaming_a_folder_above_a_pin_cannot_carry_it_away(agent: Agent) -> None:
    """A mount point cannot be renamed, but the folders above it can: each one is anchored."""
    root = agent.root
    (root / "libs" / "x").mkdir(parents=True)
    (root / "libs" / "x" / ".git").write_text("gitdir: ../../.git/modules/x\n")
    (root / "libs" / "keep.txt").write_text("k\n")
    (root / ".gitmodules").write_text('[submodule "x"]\n\tpath = libs/x\n[submodule "y"]\n\tpath = vendor/y\n')
    out = await agent(
        "mv libs l2 && mkdir -p libs/x && echo 'gitdir: /var/tmp/evil' > libs/x/.git; "
        "mv libs/x libs/y; rm -rf libs; mkdir -p vendor/y && echo 'gitdir: /var/tmp/evil' > vendor/y/.git; "
        "echo fine > libs/new.txt && echo wrote-inside"
    )
    assert (root / "libs" / "x" / ".git").read_text() == "gitdir: ../../.git/modules/x\n"
    assert not (root / "l2").exists() and not (root / "libs" / "y").exists()
    assert not (root / "vendor" / "y").exists()
    assert "wrote-inside" in out.output, out.output  # the anchored folder stays writable


async def test_new_entries_at_the_top_do_not_restart_the_shell_or_kill_its_jobs(agent: Agent) -> None:
    root = agent.root
    await agent.ok("export KEEP=1; PLAIN=2; sleep 300 & echo $! > src/job.pid")
    await agent.ok("mkdir newdir && echo x > newfile && rm newfile")
    (root / "user-made").mkdir()  # by the user, on the host
    out = await agent.ok('kill -0 $(cat src/job.pid) && echo "job-alive $KEEP ${PLAIN-gone}"; echo y > user-made/f')
    assert "job-alive 1 2" in out, out
    assert (root / "user-made" / "f").read_text() == "y\n"


async def _death(agent: Agent, replace: Callable[[], object]) -> float:
    """Seconds from a host-side change (`replace()`) to the sandbox's death."""
    pid = agent.shell.pid
    assert pid is not None
    loop = asyncio.get_running_loop()
    fd = os.pidfd_open(pid)
    dead: asyncio.Future[None] = loop.create_future()

    def gone() -> None:
        if not dead.done():
            dead.set_result(None)

    loop.add_reader(fd, gone)
    try:
        start = time.perf_counter()
        replace()
        await asyncio.wait_for(dead, 5)
        return time.perf_counter() - start
    finally:
        loop.remove_reader(fd)
        os.close(fd)


async def test_a_pin_replaced_on_the_host_kills_the_sandbox_at_once(agent: Agent) -> None:
    """An editor's atomic save over `.pre-commit-config.yaml` detaches its pin: the sandbox
    (its background jobs with it) dies before it could use the freed name, and the next
    command runs in a new shell with the pins laid again, cwd and exports kept."""
    root = agent.root
    target = root / ".pre-commit-config.yaml"
    target.write_text("repos: []\n")
    latencies = []
    for i in range(5):
        await agent.ok(f"cd src && export ROUND={i} && (sleep 300 &)")
        new = root / f".save-{i}"
        new.write_text(f"repos: [] # user {i}\n")
        latencies.append(await _death(agent, lambda: os.rename(new, target)))  # noqa: B023
        out = await agent(f'echo "$ROUND $PWD"; echo pwn >> {target}')
        assert "changed outside the sandbox" in out.output and f"{i} {root}/src" in out.output, out.output
        assert target.read_text() == f"repos: [] # user {i}\n"
        await agent.ok("cd ..")
    latencies.sort()
    median, worst = latencies[2] * 1000, latencies[-1] * 1000
    print(f"\nhost rename over a pin -> sandbox dead: median {median:.2f} ms, max {worst:.2f} ms")
    assert latencies[2] < 0.5


async def test_a_pin_changed_between_commands_is_seen_before_the_next(agent: Agent) -> None:
    """Without the watch's help (its event not read yet), each command checks the pins first."""
    root = agent.root
    await agent.ok("export KEEP=1")
    guard = agent.shell._guard
    assert guard is not None and guard.layout is not None
    guard._close_watch()  # as if the event had not arrived yet
    (root / ".envrc").rmdir()  # the placeholder, removed on the host (git clean -fd)
    (root / ".envrc").write_text("user\n")
    out = await agent('echo "k=$KEEP"; echo pwn >> .envrc')
    assert "changed outside the sandbox" in out.output and "k=1" in out.output, out.output
    assert (root / ".envrc").read_text() == "user\n"


async def test_a_pin_detached_unseen_by_the_names_watch_is_seen_in_the_sandboxs_mount_table(agent: Agent) -> None:
    """With the names' watch gone (as if its event were lost), a pin the kernel detached still
    kills the sandbox at once, with no command: its own mount table says so."""
    root = agent.root
    target = root / ".pre-commit-config.yaml"
    target.write_text("repos: []\n")
    await agent.ok("export KEEP=1; (sleep 300 &)")
    guard = agent.shell._guard
    assert guard is not None and guard._watch is not None
    guard._watch.close()
    guard._watch = None
    (root / ".save").write_text("repos: [] # user\n")
    latency = await _death(agent, lambda: os.rename(root / ".save", target))
    print(f"\nhost rename over a pin, names unwatched -> sandbox dead (mount table): {latency * 1000:.2f} ms")
    out = await agent('echo "k=$KEEP"; echo pwn >> .pre-commit-config.yaml')
    assert "changed outside the sandbox" in out.output and "k=1" in out.output, out.output
    assert target.read_text() == "repos: [] # user\n"


async def test_a_busy_job_racing_a_host_side_replacement(agent: Agent) -> None:
    """The window the watch cannot close: a job that retries a write in a loop gets through
    during the kill's latency if it is lucky. Measured and printed (docs/security.md)."""
    root = agent.root
    target = root / ".pre-commit-config.yaml"
    target.write_text("repos: []\n")
    await agent.ok(f"(while :; do echo pwn 2>/dev/null >> {target} && break; done) & sleep 0.3")
    new = root / ".save"
    new.write_text("repos: [] # user\n")
    latency = await _death(agent, lambda: os.rename(new, target))
    won = "pwn" in target.read_text()
    landed = "landed" if won else "did not land"
    print(f"\nbusy job vs host rename: killed after {latency * 1000:.2f} ms; the job's write {landed}")
    out = await agent(f"echo pwn >> {target}")
    assert out.exit_code != 0 and target.read_text().count("pwn") == int(won)


async def test_the_user_is_told_when_a_pin_changed_while_a_command_of_the_agent_ran(env: Path) -> None:
    """The race above is not silent: a host-side change of a held name while anything of the
    agent's runs in the sandbox is a warning to the user; with only the idle shell there, it
    is not (nothing could have used the name)."""
    root = init_git(env / "ws", {"README.md": "hello\n"})
    warnings: list[str] = []
    a = Agent(root, on_warning=warnings.append)
    try:
        target = root / ".pre-commit-config.yaml"
        target.write_text("repos: []\n")
        await a.ok("true")  # the shell, idle: no job of the agent's
        (root / ".s1").write_text("repos: [] # one\n")
        await _death(a, lambda: os.rename(root / ".s1", target))
        assert warnings == []
        await a.ok("sleep 30 >/dev/null 2>&1 &")
        (root / ".s2").write_text("repos: [] # two\n")
        await _death(a, lambda: os.rename(root / ".s2", target))
        assert len(warnings) == 1 and ".pre-commit-config.yaml" in warnings[0], warnings
    finally:
        await a.shell.close()


async def test_put_away_removes_the_placeholders_and_the_next_call_starts_again(agent: Agent) -> None:
    root = agent.root
    await agent.ok("cd src && export KEEP=7")
    assert (root / ".mcp.json").is_dir()
    await agent.shell.put_away()
    assert agent.shell.pid is None and not (root / ".mcp.json").exists()
    (root / ".mcp.json").write_text("{}\n")  # the server's own write, after approval
    out = await agent('echo "$KEEP $PWD"; echo x >> ../.mcp.json; echo x > ../.envrc')
    assert f"7 {root}/src" in out.output, out.output
    assert (root / ".mcp.json").read_text() == "{}\n" and (root / ".envrc").is_dir()


async def test_an_idle_shell_is_put_away_unless_a_job_or_a_turn_runs(
    env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(agentshell, "IDLE_SECONDS", 0.4)
    monkeypatch.setattr(agentshell, "IDLE_RECHECK_SECONDS", 0.2)
    root = init_git(env / "ws", {"README.md": "hello\n"})
    turn = {"on": False}
    agent = Agent(root, busy=lambda: turn["on"])
    try:
        await agent.ok("export KEEP=1; (sleep 1.2; echo done > job.txt) &")
        await asyncio.sleep(0.8)
        assert agent.shell.pid is not None and (root / ".envrc").is_dir()  # its job still runs
        await asyncio.sleep(1.4)
        assert (root / "job.txt").exists()
        assert agent.shell.pid is None and not (root / ".envrc").exists()  # put away once it ended
        out = await agent.ok('echo "k=$KEEP"')
        assert "k=1" in out and (root / ".envrc").is_dir()
        turn["on"] = True
        await asyncio.sleep(1.0)
        assert agent.shell.pid is not None, "never within a turn"
        turn["on"] = False
        await asyncio.sleep(0.6)
        assert agent.shell.pid is None
    finally:
        await agent.shell.close()


async def test_a_home_inside_a_writable_root_is_split_and_its_files_kept_out(
    env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    homes = env / "homes"
    home = homes / "u"
    for d in (".ssh", ".local/bin", "notes", ".config"):
        (home / d).mkdir(parents=True)
    (home / ".bashrc").write_text("# rc\n")
    (home / ".ssh" / "authorized_keys").write_text("key\n")
    monkeypatch.setenv("HOME", str(home))
    root = init_git(env / "ws", {"README.md": "hello\n"})
    agent = Agent(root, SandboxConfig(writable_roots=[str(homes)]))
    try:
        out = await agent(
            f"cd {home}; echo x >> .bashrc; echo k >> .ssh/authorized_keys; echo x > .profile; "
            "mkdir -p .config/git && echo x > .config/git/config; ln -s evil .local/bin/ls; mv .ssh .ssh2; "
            f"cd {homes}; mv u u2; echo ok > notes.txt && echo ok > u/notes/n.txt && echo wrote"
        )
    finally:
        await agent.shell.close()
    assert "wrote" in out.output, out.output
    assert (home / ".bashrc").read_text() == "# rc\n" and (home / ".ssh" / "authorized_keys").read_text() == "key\n"
    assert not (home / ".profile").exists() and not (home / ".config" / "git").exists()
    assert not any((home / ".local" / "bin").iterdir()) and not (homes / "u2").exists()
    assert (home / "notes" / "n.txt").exists() and (homes / "notes.txt").exists()


def test_extra_args_go_after_the_layouts_mounts_and_before_the_namespaces(env: Path) -> None:
    root = init_git(env / "ws", {"README.md": "hello\n"})
    box = AgentShell(root).sandbox_for(SandboxConfig())
    assert box is not None
    argv = sandbox.wrap(box, ["true"], extra_args=["--ro-bind", "/x", "/y"])
    at = argv.index("/x")
    assert argv.index(box.cache) < at < argv.index("--unshare-net") < argv.index("--")
