"""Hostile configuration files: bytes that are not UTF-8, a FIFO, a device, a directory,
a huge file. The server starts, answers, says once what is wrong, and uses the defaults."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from e2e_support import error_messages
from harness import init_git, lsp_session

START_TIMEOUT = 20.0


async def settle(s) -> None:
    await s.execute("coder.help", {})


def workspace(tmp_path: Path) -> tuple[Path, Path]:
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    config = root / ".coder" / "config.json"
    config.parent.mkdir()
    return root, config


async def model_still_works(s) -> None:
    result = await s.execute("coder.model", {})
    assert result["status"] == "completed", result
    assert result["data"]["current"] == "sonnet"
    changed = await s.execute("coder.model", {"args": "claude-haiku-4-5"})
    assert changed["status"] == "completed", changed


async def test_config_that_is_not_utf8(tmp_path: Path) -> None:
    root, config = workspace(tmp_path)
    config.write_bytes(b'{"model": "claude-opus-4-1\xff\xfe"}')
    async with lsp_session(root) as s:
        await model_still_works(s)
        await settle(s)
        errors = error_messages(s)
        assert len(errors) == 1 and str(config) in errors[0] and "UTF-8" in errors[0], errors


async def test_user_config_that_is_not_utf8(tmp_path: Path) -> None:
    root, _ = workspace(tmp_path)
    user = root.parent / f".xdg-{root.name}" / "coder" / "config.json"  # harness's XDG_CONFIG_HOME
    user.parent.mkdir(parents=True)
    user.write_bytes(b"\x80\x81{}")
    async with lsp_session(root) as s:
        await model_still_works(s)
        await settle(s)
        assert any("UTF-8" in e for e in error_messages(s)), error_messages(s)


@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
async def test_config_that_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    root, config = workspace(tmp_path)
    if kind == "fifo":
        os.mkfifo(config)
    elif kind == "directory":
        config.mkdir()
    else:
        config.symlink_to("/dev/zero")  # reading it never ends

    async def run() -> None:
        async with lsp_session(root) as s:
            await model_still_works(s)
            await settle(s)
            errors = error_messages(s)
            assert len(errors) == 1 and "not a regular file" in errors[0], errors

    await asyncio.wait_for(run(), START_TIMEOUT)


async def test_config_that_is_too_big(tmp_path: Path) -> None:
    root, config = workspace(tmp_path)
    config.write_text('{"model": "claude-haiku-4-5", "pad": "' + "x" * (2 * 1024 * 1024) + '"}')
    async with lsp_session(root) as s:
        await model_still_works(s)
        await settle(s)
        errors = error_messages(s)
        assert len(errors) == 1 and "too large" in errors[0], errors


async def test_a_code_action_on_a_fifo_does_not_block_the_server(tmp_path: Path) -> None:
    root, _ = workspace(tmp_path)
    os.mkfifo(root / "pipe.py")
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}

    async def run() -> None:
        async with lsp_session(root) as s:  # no API key: the turn fails, but it answers
            result = await s.execute(
                "coder.codeAction", {"uri": (root / "pipe.py").as_uri(), "range": rng, "action": "explain"}
            )
            assert result["status"] in ("completed", "failed"), result
            await model_still_works(s)

    await asyncio.wait_for(run(), START_TIMEOUT)
