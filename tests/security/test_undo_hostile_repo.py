"""Snapshots seeded from the user's repository never run what its config can run.

The first snapshot of a git workspace starts from the user's index and objects; it must get
there without a `git status` (or anything else) that would start their fsmonitor hook, hooks
or clean filters: only our private git, with its own config, reads the work tree.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from harness import init_git, lsp_session

FILES = {"a.txt": "alpha\n", "b.txt": "bravo\n", ".gitattributes": "*.txt filter=evil\n"}


def arm(root: Path, marker: Path) -> None:
    script = root.parent / "evil.sh"
    script.write_text(f"#!/bin/sh\necho \"$0 $*\" >> {marker}\ncat\n")
    script.chmod(0o755)
    for key, value in (
        ("core.fsmonitor", str(script)),
        ("core.hooksPath", str(root.parent)),
        ("filter.evil.clean", str(script)),
        ("filter.evil.smudge", str(script)),
        ("filter.evil.process", str(script)),
    ):
        subprocess.run(["git", "-C", str(root), "config", key, value], check=True)
    for hook in ("post-checkout", "pre-commit", "post-index-change", "reference-transaction"):
        (root.parent / hook).write_text(f"#!/bin/sh\necho {hook} >> {marker}\n")
        (root.parent / hook).chmod(0o755)


async def test_first_snapshot_and_undo_run_nothing_from_the_users_config(tmp_path: Path) -> None:
    root = init_git(tmp_path / "ws", FILES)
    marker = tmp_path / "ran"
    arm(root, marker)
    (root / "a.txt").write_text("local change\n")  # the seed must look at it: racy and modified
    (root / "untracked.txt").write_text("u\n")
    async with lsp_session(root) as s:
        done = await s.execute("coder.input", {"text": "!echo agent > a.txt; echo agent > b.txt; rm untracked.txt"})
        assert done["status"] == "completed"
        undo = await s.execute("coder.undo", {})
        assert undo["data"]["restored"] == ["a.txt", "b.txt", "untracked.txt"]
    assert not marker.exists(), marker.read_text()
    assert (root / "a.txt").read_text() == "local change\n"
    assert (root / "b.txt").read_text() == "bravo\n" and (root / "untracked.txt").read_text() == "u\n"
