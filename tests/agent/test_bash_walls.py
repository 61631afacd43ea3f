"""The bash tool's offer to run outside the sandbox (`agent/tools/bash.py`, `guard/walls.py`):
it names what the sandbox stopped and exactly what will run, is made for a line that exited
0 with a write lost, never for a protected path, and a call allowed only because the
sandbox runs it does not run without one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from coder_ls.agent.tools.bash import KEEP, RUN_OUTSIDE, BashInput, make_bash_tool
from coder_ls.guard import sandbox as sbx
from coder_ls.protocol.config import Config, SandboxConfig


class FakeResult(msgspec.Struct, frozen=True):
    output: str
    exit_code: int | None
    truncated: bool = False
    timed_out: bool = False


class BoxedShell:
    def __init__(self, root: Path, output: str, code: int = 1, *, box: bool = True) -> None:
        self.cwd = root
        self.output, self.code = output, code
        self.runs: list[tuple[str, bool]] = []
        self.box = (
            sbx.Sandbox(root=str(root), mode="workspace-write", network=False, writable=(), tmp="/tmp/t", cache="/c")
            if box
            else None
        )

    def sandbox_for(self, config: SandboxConfig) -> sbx.Sandbox | None:
        return self.box

    def exports(self) -> dict[str, str]:
        return {}

    async def run(self, command: str, *, on_output: Any, timeout: float, max_output_bytes: int, **kw: Any) -> Any:
        self.runs.append((command, False))
        return FakeResult(self.output, self.code)

    async def run_outside(self, command: str, **kw: Any) -> Any:
        self.runs.append((command, True))
        return FakeResult("ran outside\n", 0)


def no_check(command: str, root: Path) -> str | None:
    return None


async def call(h: Any, command: str) -> str:
    out = await make_bash_tool(no_check).run(h.ctx, BashInput(command=command))
    return out.text


@pytest.fixture
def h(make_harness: Any) -> Any:
    return make_harness(Config(), answer=RUN_OUTSIDE)


async def test_the_offer_names_the_path_and_the_command(h: Any) -> None:
    line = "echo x > /outside/f; echo done"
    h.ctx.shell = BoxedShell(h.root, "bash: line 1: /outside/f: Read-only file system\ndone\n", 0)
    text = await call(h, line)
    (_kind, message, choices) = h.host.asked[0]
    assert message.startswith(f"The sandbox stopped `{line}`: its output names /outside/f (read-only in the sandbox).")
    assert "Run this exact command again outside the sandbox" in message and choices == [RUN_OUTSIDE, KEEP]
    assert h.ctx.shell.runs == [(line, False), (line, True)]
    assert "approved running it again outside" in text and "ran outside" in text


async def test_when_autoallow_ran_it_the_offer_says_so_and_shows_a_long_command_whole(h: Any) -> None:
    line = 'set -e\npython3 -c \'open("/srv/x", "w")\'\necho more'
    out = "PermissionError: [Errno 30] Read-only file system: '/srv/x'\n"
    h.ctx.shell = BoxedShell(h.root, out, 1)
    h.ctx.sandbox_required = True
    h.host.answer = KEEP
    text = await call(h, line)
    (_kind, message, _choices) = h.host.asked[0]
    assert "without a question (sandbox.autoAllow)" in message and message.endswith(line)
    assert "the user did not approve running it outside" in text and "/srv/x" in text
    assert h.ctx.shell.runs == [(line, False)]


async def test_no_offer_for_a_protected_path(h: Any) -> None:
    h.ctx.shell = BoxedShell(h.root, "bash: line 1: .envrc: Read-only file system\n", 1)
    text = await call(h, "echo 'export X=1' > .envrc")
    assert h.host.asked == [] and len(h.ctx.shell.runs) == 1
    assert "not offered for a protected path" in text and "direnv" in text


async def test_a_refused_domain_is_named(h: Any) -> None:
    out = "coder-ls proxy: files.evil.example is not allowed (sandbox.network)\n"
    h.ctx.shell = BoxedShell(h.root, out, 22)
    h.host.answer = KEEP
    await call(h, "pip install x")
    assert "the network proxy refused files.evil.example" in h.host.asked[0][1]


async def test_nothing_stopped_nothing_asked(h: Any) -> None:
    h.ctx.shell = BoxedShell(h.root, "FAILED tests/test_x.py::test_y\n", 1)
    await call(h, "python3 -m pytest -q")
    assert h.host.asked == []


async def test_allowed_for_the_sandbox_only_never_runs_without_one(h: Any) -> None:
    h.ctx.shell = BoxedShell(h.root, "", 0, box=False)
    h.ctx.sandbox_required = True
    out = await make_bash_tool(no_check).run(h.ctx, BashInput(command="touch x"))
    assert out.is_error and "only to run in the sandbox" in out.text and h.ctx.shell.runs == []
