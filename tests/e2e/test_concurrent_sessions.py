"""Two sessions at once: separate shells, separate interrupts, events stamped per session."""

from __future__ import annotations

import asyncio
from collections import defaultdict

from e2e_support import pids_matching, wait_running, wait_until_gone
from harness import init_git, lsp_session


async def test_two_sessions_run_side_by_side_and_interrupts_stay_apart(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    marker = "sleep 30601"
    async with lsp_session(root) as s:
        a = (await s.execute("coder.input", {"text": "!mkdir -p in-a && cd in-a"}))["sessionId"]
        b = (await s.execute("coder.new", {}))["sessionId"]
        assert a != b

        _, fut_a = s.start("coder.input", {"text": f"!echo started-a; {marker}; echo end-a", "sessionId": a})
        await s.wait_for(lambda: any("started-a" in e["chunk"] for e in s.events_of("shellOutput")))
        await wait_running(marker)

        # B is not blocked by A's long command, and has its own shell.
        in_b = await asyncio.wait_for(s.execute("coder.input", {"text": "!echo hello-b; pwd", "sessionId": b}), 10)
        assert in_b["sessionId"] == b
        assert in_b["rawOutput"] == f"hello-b\n{root}\n"
        also_b = await asyncio.wait_for(s.execute("coder.shell", {"command": "echo again-b"}), 10)  # current = B
        assert also_b["sessionId"] == b
        assert not fut_a.done()

        # Interrupting B leaves A running.
        idle_b = await s.execute("coder.interrupt", {"sessionId": b})
        assert idle_b["data"]["cancelledSubmissions"] == []
        await asyncio.sleep(0.3)
        assert not fut_a.done()
        assert pids_matching(marker)

        stop_a = await s.execute("coder.interrupt", {"sessionId": a})
        result_a = await asyncio.wait_for(fut_a, 10)
        assert result_a["status"] == "cancelled"
        assert result_a["sessionId"] == a
        assert stop_a["data"]["cancelledSubmissions"] == [result_a["submissionId"]]
        assert await wait_until_gone(marker) == []

        # A's shell kept its cwd; B's never moved.
        pwd_a = await s.execute("coder.input", {"text": "!pwd", "sessionId": a})
        assert pwd_a["rawOutput"] == f"{root / 'in-a'}\n"

        # Events: the right session on each, seq rising by one per session.
        for e in s.events_of("shellOutput"):
            if "started-a" in e["chunk"]:
                assert (e["sessionId"], e["submissionId"]) == (a, result_a["submissionId"])
            if "hello-b" in e["chunk"]:
                assert (e["sessionId"], e["submissionId"]) == (b, in_b["submissionId"])
        seqs: dict[str, list[int]] = defaultdict(list)
        for e in s.events:
            seqs[e["sessionId"]].append(e["seq"])
        assert set(seqs) == {a, b}
        for sid, numbers in seqs.items():
            assert numbers == list(range(numbers[0], numbers[0] + len(numbers))), (sid, numbers)
            assert numbers[0] == 1
