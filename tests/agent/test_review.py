"""The pieces of edit review: which proposed hunks a file holds, and the question's diff."""

from __future__ import annotations

import itertools

from coder_ls.agent.editpreview import unified_diff
from coder_ls.agent.review import match_hunks, review_message
from coder_ls.agent.textedits import apply_edits, minimal_edits

BASE = "alpha\r\nbeta 😀 one\r\ngamma\r\ndelta\r\nepsilon\r\n"
NEW = "alpha\r\nbeta 😀 two\r\ngamma\r\nDELTA\r\nepsilon\r\nzeta\r\n"


def test_every_subset_of_hunks_is_recognised() -> None:
    edits = minimal_edits(BASE, NEW)
    assert len(edits) == 3
    for keep in itertools.product([True, False], repeat=len(edits)):
        result = apply_edits(BASE, [e for e, k in zip(edits, keep, strict=True) if k])
        hunks = match_hunks(BASE, edits, result)
        assert hunks is not None, keep
        assert [h.applied for h in hunks] == list(keep)


def test_a_result_with_other_changes_is_not_taken_for_a_subset() -> None:
    edits = minimal_edits(BASE, NEW)
    assert match_hunks(BASE, edits, NEW.replace("gamma", "GAMMA")) is None
    assert match_hunks(BASE, edits, "") is None


def test_the_message_names_applied_and_rejected_lines() -> None:
    edits = minimal_edits(BASE, NEW)
    hunks = match_hunks(BASE, edits, apply_edits(BASE, [edits[1]]))
    anything, message = review_message("f.txt", hunks)
    assert anything
    applied, rejected = message.split("Rejected")
    assert "line 4: `delta` -> `DELTA`" in applied
    assert "line 2: `beta 😀 one` -> `beta 😀 two`" in rejected and "zeta" in rejected
    assert review_message("f.txt", match_hunks(BASE, edits, NEW)) == (True, "")
    anything, message = review_message("f.txt", match_hunks(BASE, edits, BASE))
    assert not anything and "rejected the edit of f.txt" in message


def test_unified_diff_is_cut_at_forty_lines() -> None:
    old = "".join(f"{n}\n" for n in range(60))
    new = "".join(f"{n}!\n" for n in range(60))
    lines = unified_diff(old, new, "n.txt").splitlines()
    assert lines[:2] == ["--- a/n.txt", "+++ b/n.txt"]
    assert len(lines) == 41 and lines[-1] == "… (83 more diff lines)"
    assert "-0" in lines and "-36" in lines and "-37" not in lines  # the rest is cut


def test_a_long_line_is_cut_in_the_diff() -> None:
    lines = unified_diff("x\n", "y" * 5000 + "\n", "min.js").splitlines()
    assert lines[-1] == "+" + "y" * 199 + "…"
