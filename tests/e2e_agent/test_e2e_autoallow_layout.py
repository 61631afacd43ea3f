"""Contract section 20 with the new sandbox layout (the workspace writable whole, its top
included; protected names pinned read-only, existing or not): under the defaults the
everyday writes run in the sandbox with no question and their effect in place, and a
protected name is still never written.

These assertions need the layout of the "sandbox" helper (docs/security.md, "The agent's
sandbox"): with the split layout (no entry created at the top) they fail, and
`test_e2e_autoallow.py` holds what the user sees there instead. A real LSP client drives
the real server; the real SDK talks to the strict fake endpoint.
"""

from __future__ import annotations

import shutil

import pytest
from agent_e2e import calls, result_text, tool_call, tool_results
from anthropic_server import reply

from coder_ls.guard import sandbox

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.skipif(sandbox.bwrap_path() is None, reason="bubblewrap does not work on this machine"),
]
_ids = iter(range(1, 10_000))


async def run(a, *commands: str) -> list[str]:
    ids = [f"toolu_al{next(_ids)}" for _ in commands]
    a.fake.push(*[calls(tool_call("bash", {"command": c}, i)) for c, i in zip(commands, ids, strict=True)])
    a.fake.push(reply("done"))
    result = await a.turn("go")
    assert result["status"] == "completed", result
    last = tool_results(a.fake.message_requests[-1])
    return [result_text(last[i]) for i in ids]


async def test_everyday_top_level_writes_run_unasked_with_their_effect(agent):
    a = await agent()  # the defaults
    a.s.answer_question = lambda p: "Keep the failure"
    made = ["NOTES.md", "build", "copy.py"]
    try:
        outs = await run(a, "echo x > NOTES.md", "mkdir build && echo y > build/out.txt", "cp app.py copy.py")
        assert a.s.questions == [], [q.message for q in a.s.questions]
        assert all("exit code: 0" in o for o in outs), outs
        assert (a.root / "NOTES.md").read_text() == "x\n"
        assert (a.root / "build" / "out.txt").read_text() == "y\n"
        assert (a.root / "copy.py").exists()
    finally:
        for name in made:
            p = a.root / name
            shutil.rmtree(p) if p.is_dir() else p.unlink(missing_ok=True)


async def test_a_pytest_run_makes_its_caches_at_the_top_unasked(agent):
    a = await agent()
    a.s.answer_question = lambda p: "Keep the failure"
    test = a.root / "test_layout_unit.py"
    test.write_text("def test_ok():\n    assert True\n")
    try:
        (out,) = await run(a, "python3 -m pytest -q test_layout_unit.py")
        assert a.s.questions == [] and "1 passed" in out, out
        assert (a.root / ".pytest_cache").is_dir() or (a.root / "__pycache__").is_dir()
    finally:
        test.unlink()
        for name in (".pytest_cache", "__pycache__"):
            shutil.rmtree(a.root / name, ignore_errors=True)


async def test_sed_in_place_on_a_top_level_file_runs_unasked(agent):
    a = await agent()
    a.s.answer_question = lambda p: "Keep the failure"
    (a.root / "sedme.txt").write_text("demo\n")
    try:
        (out,) = await run(a, "sed -i s/demo/DEMO/ sedme.txt")
        assert a.s.questions == [] and "exit code: 0" in out, out
        assert (a.root / "sedme.txt").read_text() == "DEMO\n"
    finally:
        (a.root / "sedme.txt").unlink(missing_ok=True)


async def test_an_always_allowed_top_level_write_runs(agent):
    """Issue 31: "Always allow"ed `echo ran > marker.txt` at the top did not run."""
    a = await agent(sandbox={"autoAllow": False})
    a.s.answer_question = lambda p: "Always allow" if "wants to" in p.message else "Keep the failure"
    try:
        await run(a, "echo ran > marker.txt")
        assert len(a.s.questions) == 1  # the permission question, and no offer to run outside
        assert (a.root / "marker.txt").read_text() == "ran\n"
    finally:
        (a.root / "marker.txt").unlink(missing_ok=True)
        (a.root / ".coder" / "config.json").unlink(missing_ok=True)


@pytest.mark.parametrize("name", [".envrc", ".mcp.json", ".pre-commit-config.yaml", ".vscode/settings.json"])
async def test_protected_names_are_never_written_even_when_allowed(agent, name):
    a = await agent(permissions="yolo")
    a.s.answer_question = lambda p: "Run outside the sandbox"  # never offered: it would be a write
    (out,) = await run(a, f"mkdir -p $(dirname {name}) 2>/dev/null; echo 'touch PWNED' > {name}; echo done")
    assert a.s.questions == [], [q.message for q in a.s.questions]
    assert not (a.root / name).is_file() and not (a.root / "PWNED").exists()
    assert "not offered for a protected path" in out, out
