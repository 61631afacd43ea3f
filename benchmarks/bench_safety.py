"""The refused-command check on long lines: time against length (1 kB, 1 MB, 10 MB).

Four shapes: one long word (`echo <base64> | base64 -d > out.bin`, the line that froze
the old regex check for 24 s at 32 kB), many short commands (`echo a; echo a; …`, the
worst case for the walk over the tree), variables evaluated with the shell's environment
(`x=build; rm -rf "$x"; …`), and a `cd` in a subshell before each delete (`(cd a); rm -rf
b; …`, where the check judges the rest of the line from both cwds, at most 4 times over).
Run: `python benchmarks/bench_safety.py`.
The check is linear: the figures should grow ~10x from 1 MB to 10 MB.
"""

from __future__ import annotations

import base64
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from coder_ls.guard.safety import check_command
from coder_ls.guard.shellparse import parse

SIZES = {"1 kB": 1_000, "1 MB": 1_000_000, "10 MB": 10_000_000}


def long_word(n: int) -> str:
    payload = base64.b64encode(os.urandom(n))[:n].decode()
    return f"echo {payload} | base64 -d > out.bin"


def many_commands(n: int) -> str:
    return "echo a; " * (n // 8)


def variables(n: int) -> str:
    return 'x=build; rm -rf "$x"; ' * (n // 22)


def subshell_cds(n: int) -> str:
    return "(cd a); rm -rf b; " * (n // 18)


ENV = {**os.environ, "HOME": os.path.expanduser("~"), "BUILD_DIR": "build"}


def timed(command: str, root: Path, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        check_command(command, root, env=ENV)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parse("true")  # load the grammar outside the timings
    root = Path(tempfile.mkdtemp())
    quick = "--quick" in sys.argv
    print(f"{'shape':<16}{'size':>8}{'median s':>12}{'µs/kB':>10}")
    shapes = (
        ("long word", long_word),
        ("many commands", many_commands),
        ("variables", variables),
        ("subshell cds", subshell_cds),
    )
    for shape, make in shapes:
        for label, size in SIZES.items():
            if quick and size > 1_000_000:
                continue
            command = make(size)
            seconds = timed(command, root, 5 if size <= 1_000_000 else 1)
            print(f"{shape:<16}{label:>8}{seconds:>12.4f}{seconds * 1e6 / (len(command) / 1000):>10.1f}")


if __name__ == "__main__":
    main()
