"""Take each promise of docs/security.md's "Images and `@` references" and "The threat model
for `!`" out of the code in turn, and show that the tests backing it fail (issue 36: "a
test fails when a claim is removed from the code").

The claims, their tests and the mutations are tests/security/security_claims.py. For each
mutation this runs the tests of every claim it takes out, in a fresh pytest whose
interpreter (and every Python process it starts: the real server of the end-to-end tests
included) applies the mutation at start-up, from a `sitecustomize` on PYTHONPATH. A
mutation whose tests all still pass is a claim the tests do not hold: the script says so
and exits 1. Slow (it starts real servers): not run in CI.

    python scripts/mutate_claims.py [--only NAME ...] [--list] [--timeout SECONDS]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests"), str(REPO)]

from security.security_claims import ENTRIES, MUTATIONS  # noqa: E402

SITE = """import os
name = os.environ.get("CODER_MUTATION")
if name:
    from security.security_claims import apply
    apply(name)
"""


def tests_of(name: str) -> list[str]:
    out: list[str] = []
    for entry in ENTRIES:
        if name in entry.mutations:
            out += [t for t in entry.tests if t not in out]
    return out


def run(name: str, tests: list[str], site: Path, timeout: float) -> tuple[str, str]:
    env = {**os.environ, "CODER_MUTATION": name}
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(REPO), str(REPO / "tests"), env.get("PYTHONPATH", "")])
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "-x", *tests]
    try:
        done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "caught (timed out)", ""
    last = (done.stdout.strip().splitlines() or [""])[-1]
    failed = next((line for line in done.stdout.splitlines() if line.startswith("FAILED")), "")
    if done.returncode == 0:
        return "NOT CAUGHT", last
    if done.returncode == 1:
        return "caught", failed.removeprefix("FAILED ")[:160] or last
    return f"error (exit {done.returncode})", (done.stdout + done.stderr).strip()[-300:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="these mutations only")
    parser.add_argument("--list", action="store_true", help="print the mutations and their tests")
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()
    names = args.only or sorted(MUTATIONS)
    if args.list:
        for name in names:
            print(name, *tests_of(name), sep="\n  ")
        return 0
    uncaught = []
    with tempfile.TemporaryDirectory(prefix="coder-mutate-") as tmp:
        site = Path(tmp)
        (site / "sitecustomize.py").write_text(SITE)
        for name in names:
            start = time.monotonic()
            verdict, detail = run(name, tests_of(name), site, args.timeout)
            print(f"{name:22} {verdict:12} {time.monotonic() - start:5.0f}s  {detail}", flush=True)
            if not verdict.startswith("caught"):
                uncaught.append(name)
    print(f"\n{len(names) - len(uncaught)}/{len(names)} mutations made their claims' tests fail")
    for name in uncaught:
        print(f"  not caught: {name}")
    return 1 if uncaught else 0


if __name__ == "__main__":
    raise SystemExit(main())
