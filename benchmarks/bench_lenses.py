"""Typing in a file the agent wrote (contract section 23): a keystroke there, beside the
same keystroke in a file the agent never touched.

    python benchmarks/bench_lenses.py [--lines 5000] [--runs 200]
    python benchmarks/run.py --only lens_keystroke

One server, the scripted model: one turn `write`s a file of `--lines` lines of which every
25th differs from what was there (so `--lines / 25` hunks are followed). Then, alternating,
in that file and in an untouched copy of the same size: a ranged `didChange` (one character
typed on a line between two of the agent's hunks), then a `textDocument/codeLens` round
trip on the untouched file (no lenses: a barrier that costs the same on both sides). The
figure is the ratio of the medians. What it costs is following the agent's lines: the
buffer's text against the last seen (the common head and tail found by string compares),
and the spans moved. The notes give the code-lens round trip of the agent's file (all its
lenses, answered as LSP `CodeLens` objects) in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import LspClient, Result, init_git, median, now, server_env, temp_root, write_user_config


def _texts(n: int) -> tuple[str, str]:
    before = "".join(f"line {i} = compute({i})\n" for i in range(n))
    after = "".join(f"line {i} = compute({i})\n" if i % 25 else f"line {i} = compute_fast({i})\n" for i in range(n))
    return before, after


async def measure(lines: int, runs: int) -> tuple[list[float], list[float], int, float]:
    with temp_root() as tmp:
        root = tmp / "ws"
        root.mkdir()
        before, after = _texts(lines)
        init_git(root, {"agent.py": before, "plain.py": before})
        script = {"turns": [{"toolCalls": [{"name": "write", "input": {"path": "agent.py", "content": after}}]},
                            {"text": "done"}]}  # fmt: skip
        (tmp / "script.json").write_text(json.dumps(script))
        write_user_config(
            root, {"provider": "scripted", "scriptedFile": str(tmp / "script.json"), "permissions": "yolo"}
        )
        client = await LspClient.spawn([sys.executable, "-m", "coder_ls"], cwd=root, env=server_env(root))
        try:
            await client.initialize(root)
            done = await client.execute("coder.input", {"text": "speed up the compute calls"})
            assert done["status"] == "completed", done
            docs = {}
            for name, text in (("agent.py", after), ("plain.py", before)):
                uri = (root / name).as_uri()
                item = {"uri": uri, "languageId": "python", "version": 1, "text": text}
                client.notify("textDocument/didOpen", {"textDocument": item})
                docs[name] = [uri, 1]
            lenses = await client.request("textDocument/codeLens", {"textDocument": {"uri": docs["agent.py"][0]}})
            tracked = len(lenses or [])
            samples: dict[str, list[float]] = {"agent.py": [], "plain.py": []}
            for i in range(runs + 10):
                for name in ("agent.py", "plain.py") if i % 2 else ("plain.py", "agent.py"):
                    uri, version = docs[name]
                    docs[name][1] = version + 1
                    line = 12 + 25 * (i % max(1, lines // 25 - 1))
                    at = {"line": line, "character": 0}
                    change = {"range": {"start": at, "end": at}, "text": "x"}
                    t0 = now()
                    client.notify("textDocument/didChange", {
                        "textDocument": {"uri": uri, "version": version + 1}, "contentChanges": [change]})  # fmt: skip
                    await client.request("textDocument/codeLens", {"textDocument": {"uri": docs["plain.py"][0]}})
                    if i >= 10:
                        samples[name].append((now() - t0) * 1000)
            lens_ms = []
            for _ in range(20):
                t0 = now()
                await client.request("textDocument/codeLens", {"textDocument": {"uri": docs["agent.py"][0]}})
                lens_ms.append((now() - t0) * 1000)
            return samples["agent.py"], samples["plain.py"], tracked, median(lens_ms)
        finally:
            await client.close()


async def bench_lens_keystroke(quick: bool) -> list[Result]:
    lines, runs = (2000, 30) if quick else (5000, 200)
    tracked, plain, hunks, lens_ms = await measure(lines, runs)
    ratio = median(tracked) / median(plain)
    return [
        Result(
            "lens_keystroke",
            f"a keystroke (didChange) in a {lines}-line file the agent wrote / in one it did not",
            ratio,
            1.3,
            unit="x",
            samples=tracked,
            baseline=plain,
            notes=[
                f"{hunks} agent hunks followed; keystroke there: {median(tracked):.2f} ms, "
                f"in the untouched file: {median(plain):.2f} ms (each with a barrier round trip)",
                f"textDocument/codeLens of the agent's file ({hunks} lenses): {lens_ms:.1f} ms",
            ],
        )
    ]


BENCHMARKS = {"lens_keystroke": bench_lens_keystroke}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    tracked, plain, hunks, lens_ms = asyncio.run(measure(args.lines, args.runs))
    print(f"{hunks} hunks; keystroke there {median(tracked):.2f} ms, untouched {median(plain):.2f} ms, "
          f"ratio {median(tracked) / median(plain):.2f}; codeLens of {hunks} lenses {lens_ms:.1f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
