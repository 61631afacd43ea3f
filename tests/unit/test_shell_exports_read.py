"""`PersistentShell.exports()` reads each `export -p` dump once (it is asked at every agent
step, for the refused-command check): what it returns must still follow every change."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from coder_ls.engine.shell import PersistentShell


@pytest.fixture
async def shell(tmp_path: Path) -> AsyncIterator[PersistentShell]:
    sh = PersistentShell(tmp_path)
    yield sh
    await sh.close()


async def run(sh: PersistentShell, command: str) -> None:
    result = await sh.run(command, on_output=lambda _chunk: None, timeout=10.0, max_output_bytes=65536)
    assert result.exit_code == 0, result.output


async def test_exports_follow_each_change_and_are_copies(shell: PersistentShell) -> None:
    await run(shell, "export PROBE=one")
    first = shell.exports()
    assert first is not None and first["PROBE"] == "one"
    first["PROBE"] = "tampered"  # a caller's copy: the next reader must not see it
    first["INJECTED"] = "x"
    await run(shell, "true")  # the same exports again
    again = shell.exports()
    assert again is not None and again["PROBE"] == "one" and "INJECTED" not in again
    await run(shell, "export PROBE='two words'")
    changed = shell.exports()
    assert changed is not None and changed["PROBE"] == "two words"
    await run(shell, "unset PROBE")
    gone = shell.exports()
    assert gone is not None and "PROBE" not in gone
    await run(shell, "export PROBE=one")  # back to an earlier dump: read as it is now
    back = shell.exports()
    assert back is not None and back["PROBE"] == "one"
