"""Compaction in levels: a 200-step agent turn with and without the first level (contract
section 19; agent/compact_clear.py).

The real server (stdio) runs one turn of 200 `read` steps of a ~24 KB file against the fake
Messages API, which reports each request's input tokens as its token counting counts them
(tests/fakes/anthropic_count.py: characters / 4), so auto-compaction sees a window that fills
as it would. Model: claude-haiku-4-5 (200k window, compaction from 80%). "without" is the same
run with `compact.keepToolResults` above the number of steps: nothing is ever old enough to
clear, every compaction is a model summary (the behaviour before the first level).

Figures per run: input tokens sent over the whole turn (what is billed), summary requests
(model calls spent on compaction), clears, and the turn's wall time. The ratio rows compare
the two runs made in the same process, one after the other (ABBA over two rounds unless --quick).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import time
from typing import Any

from common import REPO, SMALL_REPO, EventWaiter, Result, coder_server, init_git, median, temp_root, write_user_config

sys.path.insert(0, str(REPO / "tests" / "fakes"))
from anthropic_count import count_tokens
from anthropic_server import FakeAnthropicServer, reply

SUMMARY_ASK = "Summarise this conversation"
FILE = "".join(f"line {i:04d}: " + "the quick brown fox jumps over the lazy dog " * 2 + "\n" for i in range(240))
_ids = itertools.count(1)


class CountingFake(FakeAnthropicServer):
    """Reports each request's counted input tokens as its usage; answers summary requests
    with a summary and every other request with the next scripted step."""

    def __init__(self, steps: int) -> None:
        super().__init__()
        self.steps = steps
        self.sent_tokens = 0
        self.summaries = 0
        self.answered = 0

    def _pick(self, messages: str) -> dict[str, Any]:
        if SUMMARY_ASK in messages:
            self.summaries += 1
            return reply("- reading big.txt again and again, as the user asked; nothing else to keep")
        self.answered += 1
        if self.answered > self.steps:
            return reply("Read it 200 times.")
        call = {"id": f"toolu_{next(_ids):06d}", "name": "read", "input": {"path": "big.txt"}}
        return reply("", toolCalls=[call])

    async def _answer(self, spec: dict[str, Any], body: dict[str, Any], reader: Any, writer: Any) -> bool:
        tokens = count_tokens(body)
        self.sent_tokens += tokens
        spec = {**spec, "usage": {"input_tokens": tokens, "output_tokens": 20}}
        return await super()._answer(spec, body, reader, writer)


async def one_run(steps: int, first_level: bool) -> dict[str, float]:
    fake = CountingFake(steps).start()
    try:
        with temp_root() as tmp:
            root = init_git(tmp / "ws", {**SMALL_REPO, "big.txt": FILE})
            keep = 3 if first_level else steps + 10
            write_user_config(root, {"permissions": "yolo", "model": "claude-haiku-4-5", "maxSteps": steps + 5,
                                     "compact": {"keepToolResults": keep}})  # fmt: skip
            env = {"ANTHROPIC_API_KEY": "x", "ANTHROPIC_BASE_URL": fake.url}
            async with coder_server(root, env=env) as client:
                events = EventWaiter(client)
                t0 = time.perf_counter()
                r = await client.execute("coder.input", {"text": "Read big.txt, many times."}, timeout=900)
                wall = time.perf_counter() - t0
                if r["status"] != "completed":
                    raise RuntimeError(f"turn {r['status']}: {r.get('error')}")
                clears = [e for e in events.events if e.get("type") == "contextCompacted" and e.get("level") == "clear"]
    finally:
        fake.stop()
    return {"tokens": fake.sent_tokens, "summaries": fake.summaries, "clears": len(clears), "wall": wall,
            "requests": len(fake.message_requests)}  # fmt: skip


async def bench_compact(quick: bool) -> list[Result]:
    steps = 60 if quick else 200
    order = [True, False] if quick else [True, False, False, True]
    runs: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    for first_level in order:
        runs[first_level].append(await one_run(steps, first_level))
    w, wo = runs[True], runs[False]

    def med(side: list[dict[str, float]], key: str) -> float:
        return median([r[key] for r in side])

    notes = [
        f"{steps} read steps of a {len(FILE) // 1024} KB file, claude-haiku-4-5 (200k window); runs in order "
        f"{['with' if f else 'without' for f in order]}",
        f"with the first level: {med(w, 'tokens'):,.0f} input tokens, {med(w, 'summaries'):.0f} summaries, "
        f"{med(w, 'clears'):.0f} clears, {med(w, 'requests'):.0f} requests, {med(w, 'wall'):.1f} s",
        f"without: {med(wo, 'tokens'):,.0f} input tokens, {med(wo, 'summaries'):.0f} summaries, "
        f"{med(wo, 'requests'):.0f} requests, {med(wo, 'wall'):.1f} s",
    ]
    print(json.dumps({"with": w, "without": wo}))
    return [
        Result("compact_tokens_ratio", "input tokens of the turn, with / without the first level",
               med(w, "tokens") / med(wo, "tokens"), None, unit="x", notes=notes),
        Result("compact_wall_ratio", "wall time of the turn, with / without the first level",
               med(w, "wall") / med(wo, "wall"), None, unit="x",
               samples=[r["wall"] * 1000 for r in w], baseline=[r["wall"] * 1000 for r in wo]),
        Result("compact_summaries", "model calls spent on compaction, with the first level",
               med(w, "summaries"), None, unit=""),
    ]  # fmt: skip


BENCHMARKS = {"compact_levels": bench_compact}


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    for result in asyncio.run(bench_compact(quick)):
        print(result.name, result.value, *result.notes, sep="\n  ")
