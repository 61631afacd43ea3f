"""Which lines a submission wrote are still there to revert ("Coder: Revert agent change")."""

from __future__ import annotations

from coder_ls.engine.agentlines import revert_hunks

BEFORE = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
AFTER = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    # product\n    return a * b\n"


def test_a_replaced_line_reverts_to_the_old_one() -> None:
    [h] = revert_hunks(BEFORE, AFTER, AFTER, 1, 1, "s1")
    assert (h.start_line, h.end_line, h.old_text, h.submission_id) == (1, 2, "    return a - b\n", "s1")


def test_an_inserted_line_reverts_to_nothing_and_other_lines_offer_nothing() -> None:
    [h] = revert_hunks(BEFORE, AFTER, AFTER, 5, 5, "s1")
    assert (h.start_line, h.end_line, h.old_text) == (5, 6, "")
    assert revert_hunks(BEFORE, AFTER, AFTER, 0, 0, "s1") == []
    assert revert_hunks(BEFORE, AFTER, AFTER, 6, 6, "s1") == []


def test_a_selection_over_both_hunks_gets_both() -> None:
    assert len(revert_hunks(BEFORE, AFTER, AFTER, 0, 6, "s1")) == 2


def test_lines_moved_by_the_user_are_found_where_they_are_now() -> None:
    current = "import os\n\n" + AFTER
    [h] = revert_hunks(BEFORE, AFTER, current, 3, 3, "s1")
    assert (h.start_line, h.end_line) == (3, 4)


def test_a_hunk_the_user_changed_since_is_not_offered() -> None:
    current = AFTER.replace("return a + b", "return a + b + 0")
    assert revert_hunks(BEFORE, AFTER, current, 1, 1, "s1") == []


def test_a_new_file_reverts_to_empty_and_the_last_line_keeps_no_newline() -> None:
    [h] = revert_hunks("x = 1\n", "x = 1\ny = 2", "x = 1\ny = 2", 1, 1, "s1")
    assert (h.start_line, h.end_line, h.old_text) == (1, 2, "")
    [h] = revert_hunks("a\nold", "a\nnew", "a\nnew", 1, 1, "s1")
    assert h.old_text == "old"
