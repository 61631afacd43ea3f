"""A workspace whose `.coder/` cannot be written (a read-only bind mount, run under
bubblewrap so that even root cannot write it), a workspace deleted while the server runs,
and `/undo --all` outside git: the server says once what is off and why, and everything
else works with real session ids; `/undo` answers `undo_unavailable`."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import harness
import pytest
from agent_e2e import api_env
from anthropic_server import FakeAnthropicServer, reply
from harness import init_git, lsp_session
from lsprotocol import types


def _bwrap_works() -> bool:
    if shutil.which("bwrap") is None:
        return False
    run = subprocess.run(
        ["bwrap", "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"],
        stdin=subprocess.DEVNULL, capture_output=True,
    )  # fmt: skip
    return run.returncode == 0


needs_bwrap = pytest.mark.skipif(not _bwrap_works(), reason="bubblewrap cannot run here")


@pytest.fixture
def read_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """Paths listed here are bound read-only over themselves for the server process."""
    paths: list[Path] = []

    def wrapped() -> list[str]:
        binds = [a for p in paths for a in ("--ro-bind", str(p), str(p))]
        return ["bwrap", "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *binds, "--", *SERVER]

    SERVER = list(harness.SERVER)
    monkeypatch.setattr(harness, "SERVER", _Lazy(wrapped))
    yield paths


class _Lazy(list[str]):
    """`*harness.SERVER` as the read-only binds stand when the server starts."""

    def __init__(self, make: object) -> None:
        super().__init__()
        self._make = make

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._make())  # type: ignore[operator]


def warnings(s: harness.Session) -> list[str]:
    return [m.message for m in s.client.messages if m.type == types.MessageType.Warning]


async def check_degraded_but_working(s: harness.Session, fake: FakeAnthropicServer) -> None:
    await s.wait_for(lambda: warnings(s))
    [warning] = warnings(s)
    assert "/undo" in warning and "session" in warning and "Read-only file system" in warning, warning

    shell = await s.execute("coder.input", {"text": "!echo hi"})
    assert shell["status"] == "completed" and shell["rawOutput"].strip() == "hi", shell
    sid = shell["sessionId"]
    assert len(sid) == 32, shell  # a real id, not ""

    helped = await s.execute("coder.input", {"text": "/help", "sessionId": sid})
    assert helped["status"] == "completed" and helped["sessionId"] == sid, helped

    fake.push(reply("hello from the model"))
    turn = await s.execute("coder.input", {"text": "say hello", "sessionId": sid})
    assert turn["status"] == "completed" and turn["reply"] == "hello from the model", turn
    assert turn["sessionId"] == sid

    listed = await s.execute("coder.input", {"text": "/sessions", "sessionId": sid})
    assert listed["status"] == "completed", listed
    assert [i["id"] for i in listed["data"]["sessions"]] == [sid], listed  # in memory, with its title

    undo = await s.execute("coder.input", {"text": "/undo", "sessionId": sid})
    assert undo["status"] == "failed" and undo["error"]["code"] == "undo_unavailable", undo
    assert "Read-only file system" in undo["error"]["message"], undo

    fresh = await s.execute("coder.input", {"text": "/new"})
    assert fresh["status"] == "completed" and len(fresh["sessionId"]) == 32 and fresh["sessionId"] != sid, fresh
    again = await s.execute("coder.input", {"text": "!echo again", "sessionId": sid})
    assert again["status"] == "completed", again  # the first session is still there
    assert len(warnings(s)) == 1, warnings(s)  # said once, not per command


@needs_bwrap
async def test_a_read_only_state_folder_is_a_stated_degraded_mode(tmp_path: Path, read_only: list[Path]) -> None:
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    (root / ".coder").mkdir()
    read_only.append(root / ".coder")
    with FakeAnthropicServer() as fake:
        async with lsp_session(root, env=api_env(fake)) as s:
            await check_degraded_but_working(s, fake)
    assert sorted(p.name for p in (root / ".coder").iterdir()) == []


@needs_bwrap
async def test_a_read_only_workspace_is_a_stated_degraded_mode(tmp_path: Path, read_only: list[Path]) -> None:
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    read_only.append(root)
    with FakeAnthropicServer() as fake:
        async with lsp_session(root, env=api_env(fake)) as s:
            await check_degraded_but_working(s, fake)
    assert not (root / ".coder").exists()


@needs_bwrap
async def test_sessions_already_on_disk_are_listed_and_resumable_read_only(
    tmp_path: Path, read_only: list[Path]
) -> None:
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:  # a normal server leaves one session behind
        first = await s.execute("coder.input", {"text": "!echo before"})
        assert first["status"] == "completed", first
    log = root / ".coder" / "sessions" / f"{first['sessionId']}.jsonl"
    before = log.read_bytes()
    read_only.append(root / ".coder")
    async with lsp_session(root) as s:
        listed = await s.execute("coder.input", {"text": "/sessions"})
        assert first["sessionId"] in [i["id"] for i in listed["data"]["sessions"]], listed
        resumed = await s.execute("coder.input", {"text": f"/resume {first['sessionId'][:8]}"})
        assert resumed["status"] == "completed" and resumed["sessionId"] == first["sessionId"], resumed
        more = await s.execute("coder.input", {"text": "!echo after", "sessionId": first["sessionId"]})
        assert more["status"] == "completed", more
    assert log.read_bytes() == before


async def test_a_workspace_deleted_while_running_is_not_recreated(tmp_path: Path) -> None:
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:
        first = await s.execute("coder.input", {"text": "!echo hi > b.txt"})
        assert first["status"] == "completed", first
        shutil.rmtree(root)
        for text in ("!echo hi", "/undo", "say hi"):
            result = await s.execute("coder.input", {"text": text, "sessionId": first["sessionId"]})
            assert result["status"] == "failed" and result["error"]["code"] == "workspace_missing", result
            assert str(root) in result["error"]["message"], result
        assert not root.exists()
    assert not root.exists()


async def test_undo_all_outside_git_is_unavailable(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    async with lsp_session(root) as s:
        result = await s.execute("coder.input", {"text": "/undo --all"})
        # contract section 18: an unavailable command fails with `unavailable` and the reason
        assert result["status"] == "failed" and result["error"]["code"] == "unavailable", result
        assert "not a git repository" in result["error"]["message"]
        assert (root / "a.txt").read_text() == "a\n"


async def test_a_command_that_deletes_the_workspace_does_not_bring_it_back(tmp_path: Path) -> None:
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:
        first = await s.execute("coder.input", {"text": "!echo hi > b.txt"})  # checkpoints and watcher running
        assert first["status"] == "completed", first
        command = f"!cd / && mv {root} {root}.moved"  # `rm -rf` of the workspace is refused
        gone = await s.execute("coder.input", {"text": command, "sessionId": first["sessionId"]})
        assert gone["status"] == "completed", gone["error"]
        assert not root.exists()
        after = await s.execute("coder.input", {"text": "!echo hi", "sessionId": first["sessionId"]})
        assert after["error"]["code"] == "workspace_missing", after
    assert not root.exists()
