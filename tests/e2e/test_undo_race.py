"""/undo over 3,000 files while another process rewrites them: no write of the other
process is silently overwritten. Every path the other process wrote is either kept (and
listed as a conflict) or holds its bytes afterwards; a path `/undo` reports as restored
holds what it held before the submission unless the other process wrote it later."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from harness import init_git, lsp_session

FILES = 3000

# Another process, as an editor or a formatter writes: each file of its list once, in a
# shuffled order, as a temporary renamed over the name (`--in-place`: open, truncate, write).
# It prints, per write, the path once the write is complete.
REWRITER = r"""
import os, random, sys, time
root, listing, pace, in_place = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4] == "1"
paths = [p for p in open(listing).read().split("\n") if p]
random.Random(7).shuffle(paths)
out = sys.stdout
for n, rel in enumerate(paths):
    target = os.path.join(root, rel)
    data = b"other %d\n" % n
    if in_place:
        with open(target, "wb") as f:
            f.write(data)
    else:
        tmp = target + ".rw-tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, target)
    out.write(rel + "\n")
    out.flush()
    end = time.perf_counter() + pace
    while time.perf_counter() < end:
        pass
"""


def before_text(i: int) -> bytes:
    return f"# file {i}\nx = {i}\n".encode()


def file_name(i: int) -> str:
    return f"src/pkg{i // 300}/mod{i // 30}/f{i}.py"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("race") / "ws"
    init_git(root, {file_name(i): before_text(i).decode() for i in range(FILES)})
    return root


@pytest.fixture
def ws(template: Path, tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    subprocess.run(["cp", "-a", str(template), str(root)], check=True, stdin=subprocess.DEVNULL)
    return root


class RaceOutcome:
    def __init__(self, undo: dict[str, Any], written: list[str], final: dict[str, bytes], seconds: float) -> None:
        self.undo, self.written, self.final, self.seconds = undo, written, final, seconds

    def silent_overwrites(self) -> list[str]:
        """Paths the other process wrote whose bytes /undo replaced while saying "restored"."""
        originals = {file_name(i): before_text(i) for i in range(FILES)}
        restored = set(self.undo["data"]["restored"])
        return sorted(p for p in set(self.written) & restored if self.final[p] == originals[p])

    def lost_writes(self) -> list[str]:
        """Paths the other process wrote that hold neither its bytes nor are listed as conflicts."""
        conflicts = set(self.undo["data"]["conflicts"])
        return sorted(p for p in set(self.written) if not self.final[p].startswith(b"other ") and p not in conflicts)


async def race(root: Path, listing: Path, *, pace: float, in_place: bool = False) -> RaceOutcome:
    async with lsp_session(root) as s:
        assert (await s.execute("coder.shell", {"command": "true"}))["status"] == "completed"
        change = await s.execute("coder.shell", {"command": "git ls-files -z src | xargs -0 sed -i 's/^x = /y = /'"})
        assert (change["status"], change["exitCode"]) == ("completed", 0), change
        rewriter = await asyncio.create_subprocess_exec(
            sys.executable, "-c", REWRITER, str(root), str(listing), str(pace), "1" if in_place else "0",
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert rewriter.stdout is not None
        first = await rewriter.stdout.readline()  # it is writing
        t0 = asyncio.get_running_loop().time()
        undo = await asyncio.wait_for(s.execute("coder.undo", {}), 300)
        seconds = asyncio.get_running_loop().time() - t0
        rest, _ = await rewriter.communicate()
    assert undo["status"] == "completed", undo
    written = (first + rest).decode().split()
    final = {file_name(i): (root / file_name(i)).read_bytes() for i in range(FILES)}
    return RaceOutcome(undo, written, final, seconds)


@pytest.mark.parametrize("in_place", [False, True], ids=["renamed", "in-place"])
async def test_undo_never_silently_overwrites_a_concurrent_writer(ws: Path, tmp_path: Path, in_place: bool) -> None:
    listing = tmp_path / "listing"
    listing.write_text("\n".join(file_name(i) for i in range(0, FILES, 2)))  # every other file
    outcome = await race(ws, listing, pace=0.0005, in_place=in_place)
    data = outcome.undo["data"]
    written = set(outcome.written)
    assert written, "the other process wrote nothing"
    assert outcome.silent_overwrites() == [], (len(outcome.silent_overwrites()), len(written))
    assert outcome.lost_writes() == []
    # what nobody else touched is undone, and reported so
    untouched = {file_name(i) for i in range(1, FILES, 2)}
    assert untouched <= set(data["restored"])
    for i in range(1, FILES, 2):
        assert outcome.final[file_name(i)] == before_text(i)
    # a conflict is a path the other process wrote, and it keeps the other process's bytes
    assert set(data["conflicts"]) <= written
    for p in data["conflicts"]:
        assert outcome.final[p].startswith(b"other "), p
    assert not [n for n in os.listdir(ws / "src" / "pkg0" / "mod0") if "coder-undo" in n or n.startswith(".")]
