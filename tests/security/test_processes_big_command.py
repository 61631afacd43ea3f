"""Issue 8: a `!cmd` over 128 KiB (the kernel's cap on one argument) runs: the shell gets
the command through a file, not as an argument (it failed with E2BIG)."""

from __future__ import annotations

import pytest
from harness import init_git, lsp_session

pytestmark = pytest.mark.filterwarnings("ignore:Unknown progress token")


async def test_a_200_kib_user_command_runs(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    payload = "x" * (200 * 1024)
    command = f"v='{payload}'; echo ${{#v}} chars; echo tail-ok"
    async with lsp_session(root) as s:
        result = await s.execute("coder.shell", {"command": command})
    assert result["status"] == "completed", {k: str(v)[:300] for k, v in result.items()}
    assert f"{len(payload)} chars" in result["reply"] and "tail-ok" in result["reply"]
