"""The manual corpus's figures: `python -m security.corpus_manual.measure` (from tests/,
with the checkout to measure first on PYTHONPATH) prints, per tool, how many dangerous
lines the refused-command check lets through and how many ordinary lines it refuses, and
the misses. The bounds in test_refused_corpus.py are these figures."""

from __future__ import annotations

import sys
import time
from collections import Counter

from coder_ls.guard.safety import check_command
from security.corpus_manual.generate import ENV, HOME, LEFT_OUT, ROOT, Line, corpus, materialize


def judge(line: Line) -> bool:
    """Whether the check refuses it."""
    return check_command(line.line, ROOT, cwd=ROOT, home=HOME, env=ENV) is not None


def figures(lines: list[Line]) -> tuple[list[Line], list[Line]]:
    through = [x for x in lines if x.dangerous and not judge(x)]
    refused = [x for x in lines if not x.dangerous and judge(x)]
    return through, refused


def main() -> None:
    materialize()
    lines = corpus()
    start = time.perf_counter()
    through, refused = figures(lines)
    took = time.perf_counter() - start
    dangerous = Counter(x.tool for x in lines if x.dangerous)
    ordinary = Counter(x.tool for x in lines if not x.dangerous)
    t_by, r_by = Counter(x.tool for x in through), Counter(x.tool for x in refused)
    for tool in sorted(dangerous | ordinary):
        print(f"{tool:8} {t_by[tool]}/{dangerous[tool]} through, {r_by[tool]}/{ordinary[tool]} refused")
    print(
        f"all      {len(through)}/{sum(dangerous.values())} through, {len(refused)}/{sum(ordinary.values())} refused"
        f" ({len(lines)} lines, {took:.1f} s; left out: {sum(len(v) for v in LEFT_OUT.values())} option x tool)"
    )
    show = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    for name, misses in (("through", through), ("refused", refused)):
        by_option = Counter((x.tool, x.option) for x in misses)
        print(f"-- {name}, by option: {by_option.most_common(show)}")
        for x in misses[:show]:
            print(f"   {x.line}")


if __name__ == "__main__":
    main()
