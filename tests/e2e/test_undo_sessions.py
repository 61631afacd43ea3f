"""`/undo` belongs to its session: two servers (two editor windows) on one workspace.

Each window's `/undo` reverts what its own last submission changed, never the other window's
work; a path both changed while both were running cannot be told apart and is kept and listed
as a conflict. Two servers snapshotting at once must not break each other's undo coverage.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from harness import init_git, lsp_session

FILES = {"pkg0/mod.py": "zero = 0\n", "pkg1/mod.py": "one = 1\n"}


def _notices(s) -> list[str]:
    return [e.get("message", "") for e in s.events_of("notice")]


async def test_each_window_undoes_its_own_last_submission(tmp_path: Path) -> None:
    root = init_git(tmp_path / "ws", FILES)
    async with lsp_session(root) as a, lsp_session(root) as b:
        done = await a.execute("coder.input", {"text": "!echo A > pkg0/mod.py"})
        assert done["status"] == "completed", done
        done = await b.execute("coder.input", {"text": "!echo B > pkg1/mod.py"})
        assert done["status"] == "completed", done

        undone = await a.execute("coder.undo", {})
        assert undone["status"] == "completed", undone
        assert undone["data"]["restored"] == ["pkg0/mod.py"], undone
        assert (root / "pkg0/mod.py").read_text() == "zero = 0\n"
        assert (root / "pkg1/mod.py").read_text() == "B\n"  # B's edit is B's to undo

        again = await a.execute("coder.undo", {})  # A has nothing left: B's record is not A's
        assert again["reply"] == "Nothing to undo.", again
        assert (root / "pkg1/mod.py").read_text() == "B\n"

        undone = await b.execute("coder.undo", {})
        assert undone["data"]["restored"] == ["pkg1/mod.py"], undone
        assert (root / "pkg1/mod.py").read_text() == "one = 1\n"


async def test_a_later_change_by_another_window_is_a_conflict(tmp_path: Path) -> None:
    root = init_git(tmp_path / "ws", FILES)
    async with lsp_session(root) as a, lsp_session(root) as b:
        await a.execute("coder.input", {"text": "!echo A > pkg0/mod.py; echo A > pkg0/new.py"})
        await b.execute("coder.input", {"text": "!echo B > pkg0/mod.py"})
        undone = await a.execute("coder.undo", {})
        assert undone["data"]["conflicts"] == ["pkg0/mod.py"], undone
        assert undone["data"]["removed"] == ["pkg0/new.py"], undone
        assert "pkg0/mod.py" in undone["reply"]
        assert (root / "pkg0/mod.py").read_text() == "B\n"
        assert not (root / "pkg0/new.py").exists()


async def test_concurrent_windows_do_not_undo_each_others_files(tmp_path: Path) -> None:
    root = init_git(tmp_path / "ws", FILES)
    gate = tmp_path / "gate"  # outside the workspace: A waits for it
    async with lsp_session(root) as a, lsp_session(root) as b:
        # A writes one file, then waits (still running) while B does its whole submission.
        _, a_answer = a.start(
            "coder.input",
            {"text": f"!echo A > pkg0/mod.py; while [ ! -e {gate} ]; do sleep 0.05; done; echo A > pkg0/late.py"},
        )
        await a.wait_for(lambda: (root / "pkg0/mod.py").read_text() == "A\n", timeout=20)
        b_text = "!echo B > pkg1/mod.py; echo B > pkg1/b1.py; echo B > pkg1/b2.py"
        done = await b.execute("coder.input", {"text": b_text})
        assert done["status"] == "completed", done
        gate.write_text("go")
        assert (await asyncio.wait_for(a_answer, 20))["status"] == "completed"

        undone = await a.execute("coder.undo", {})
        data = undone["data"]
        # B's three files are B's: kept and listed, never reverted by A.
        assert (root / "pkg1/mod.py").read_text() == "B\n"
        assert (root / "pkg1/b1.py").exists() and (root / "pkg1/b2.py").exists()
        assert {"pkg1/mod.py", "pkg1/b1.py", "pkg1/b2.py"} <= set(data["conflicts"]), undone
        # What A changed before B began, and after B was over, is reverted.
        assert data["restored"] == ["pkg0/mod.py"], undone
        assert data["removed"] == ["pkg0/late.py"], undone
        assert (root / "pkg0/mod.py").read_text() == "zero = 0\n"
        for path in data["conflicts"]:
            assert path in undone["reply"]


async def test_two_servers_snapshotting_at_once_keep_undo_coverage(tmp_path: Path) -> None:
    files = {f"pkg{w}/f{i:03}.txt": f"{w} {i}\n" for w in range(2) for i in range(300)}
    root = init_git(tmp_path / "ws", files)
    rounds = 12
    async with lsp_session(root) as a, lsp_session(root) as b:

        async def work(s, w: int) -> None:
            for n in range(rounds):
                text = f"!for i in 0 1 2 3 4 5 6 7 8 9; do echo {n} > pkg{w}/f00$i.txt; done"
                result = await s.execute("coder.input", {"text": text})
                assert result["status"] == "completed", result

        await asyncio.gather(work(a, 0), work(b, 1))
        for s in (a, b):
            assert not [m for m in _notices(s) if "/undo will not cover" in m], _notices(s)
        # Each window's /undo stays within what could be its own: never the other's package.
        undone_a = await a.execute("coder.undo", {})
        undone_b = await b.execute("coder.undo", {})
        assert undone_a["data"].get("submissionId") and undone_b["data"].get("submissionId"), (undone_a, undone_b)
        assert undone_a["data"]["submissionId"] != undone_b["data"]["submissionId"]
        for undone, other in ((undone_a, "pkg1/"), (undone_b, "pkg0/")):
            touched = undone["data"]["restored"] + undone["data"]["removed"]
            assert not [p for p in touched if p.startswith(other)], undone


def _wait_line(gate: Path) -> str:
    return f"while [ ! -e {gate} ]; do sleep 0.05; done"


async def test_undo_never_takes_a_running_windows_work(tmp_path: Path) -> None:
    root = init_git(tmp_path / "ws", FILES)
    gate = tmp_path / "gate"
    async with lsp_session(root) as a, lsp_session(root) as b:
        await a.execute("coder.input", {"text": "!echo A1 > pkg0/mod.py"})
        _, a_answer = a.start("coder.input", {"text": f"!echo A2 > pkg0/two.py; {_wait_line(gate)}"})
        await a.wait_for(lambda: (root / "pkg0/two.py").exists(), timeout=20)
        # B has no submission of its own; A's server runs: neither A's record nor its running turn is B's.
        undone = await b.execute("coder.undo", {})
        assert undone["reply"] == "Nothing to undo.", undone
        assert (root / "pkg0/mod.py").read_text() == "A1\n" and (root / "pkg0/two.py").exists()
        gate.write_text("go")
        await asyncio.wait_for(a_answer, 20)
        undone = await a.execute("coder.undo", {})
        assert undone["data"]["removed"] == ["pkg0/two.py"], undone
        assert (root / "pkg0/mod.py").read_text() == "A1\n"


async def test_work_shared_with_a_running_window_is_kept_by_both_undos(tmp_path: Path) -> None:
    root = init_git(tmp_path / "ws", FILES)
    gate_a, gate_b = tmp_path / "gate_a", tmp_path / "gate_b"
    async with lsp_session(root) as a, lsp_session(root) as b:
        _, a_answer = a.start("coder.input", {"text": f"!{_wait_line(gate_a)}; echo A > pkg0/a.py"})
        await asyncio.sleep(1.0)  # A's snapshot is taken
        _, b_answer = b.start(
            "coder.input", {"text": f"!echo B > pkg1/b0.py; {_wait_line(gate_b)}; echo B > pkg1/b2.py"}
        )
        await b.wait_for(lambda: (root / "pkg1/b0.py").exists(), timeout=20)
        gate_a.write_text("go")
        await asyncio.wait_for(a_answer, 20)

        # A's submission saw b0.py appear, but B (still running) may have written it.
        undone = await a.execute("coder.undo", {})
        assert sorted(undone["data"]["conflicts"]) == ["pkg0/a.py", "pkg1/b0.py"], undone
        assert undone["data"]["removed"] == [] and undone["data"]["restored"] == [], undone
        assert (root / "pkg1/b0.py").exists() and (root / "pkg0/a.py").exists()

        gate_b.write_text("go")
        await asyncio.wait_for(b_answer, 20)
        # B's submission saw a.py appear while A ran: not B's to remove, even after A's /undo.
        undone = await b.execute("coder.undo", {})
        assert undone["data"]["conflicts"] == ["pkg0/a.py", "pkg1/b0.py"], undone
        assert undone["data"]["removed"] == ["pkg1/b2.py"], undone
        assert (root / "pkg0/a.py").exists() and not (root / "pkg1/b2.py").exists()


async def test_two_sessions_of_one_server_undo_their_own(tmp_path: Path) -> None:
    root = init_git(tmp_path / "ws", FILES)
    async with lsp_session(root) as s:
        a = (await s.execute("coder.input", {"text": "!echo A > pkg0/mod.py"}))["sessionId"]
        b = (await s.execute("coder.new", {}))["sessionId"]
        await s.execute("coder.input", {"text": "!echo B > pkg1/mod.py", "sessionId": b})
        undone = await s.execute("coder.undo", {"sessionId": a})
        assert undone["data"]["restored"] == ["pkg0/mod.py"], undone
        assert (root / "pkg1/mod.py").read_text() == "B\n"
        assert (await s.execute("coder.undo", {"sessionId": a}))["reply"] == "Nothing to undo."
        undone = await s.execute("coder.undo", {"sessionId": b})
        assert undone["data"]["restored"] == ["pkg1/mod.py"], undone
