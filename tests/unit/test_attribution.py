"""`AgentLines` (coder_ls/attribution): spans follow the text as the agent and the user change
it, the user's changes to them come out once as a capped diff, and reverts are checked."""

from __future__ import annotations

from coder_ls.attribution import agentlines
from coder_ls.attribution.agentlines import AgentLines, changed_since, revert_text

BEFORE = "a\nb\nc\nd\ne\n"
AFTER = "a\nB\nc\nd\nE\nF\n"  # the agent changes b, and e into E F


def wrote() -> AgentLines:
    lines = AgentLines()
    lines.prompt("s1", "make the letters big please now and then")
    lines.wrote("/w/f", "f", BEFORE, AFTER, "s1", None)
    return lines


def starts(lines: AgentLines) -> list[tuple[int, int]]:
    return [(s.start, s.end) for s in lines.spans("/w/f")]


def test_the_agents_hunks_are_spans_with_what_they_replaced_and_who_wrote_them():
    lines = wrote()
    assert starts(lines) == [(1, 2), (4, 6)]
    first, second = lines.spans("/w/f")
    assert (first.old_text, first.agent_text) == ("b\n", "B\n")
    assert (second.old_text, second.agent_text) == ("e\n", "E\nF\n")
    assert first.author.prompt == "make the letters big please now…" and first.author.subagent is None


def test_lines_the_user_inserts_or_removes_above_move_the_spans_and_tell_nothing():
    lines = wrote()
    lines.editor_text("/w/f", "new\nnew2\n" + AFTER)
    assert starts(lines) == [(3, 4), (6, 8)]
    lines.editor_text("/w/f", AFTER[2:])  # now the first line goes
    assert starts(lines) == [(0, 1), (3, 5)]
    assert lines.take_user_edits("/w") == []  # nothing inside a span changed


def test_a_line_inserted_right_above_a_span_stays_out_of_it():
    lines = wrote()
    lines.editor_text("/w/f", "a\nx\nB\nc\nd\nE\nF\n")
    assert starts(lines)[0] == (2, 3)


def test_the_users_change_inside_a_span_is_told_once_as_a_diff():
    lines = wrote()
    lines.editor_text("/w/f", AFTER.replace("B", "Bee"))
    [edit] = lines.take_user_edits("/w")
    assert edit.path == "f" and "-B\n+Bee" in edit.diff
    assert lines.take_user_edits("/w") == []
    assert "Keep their changes" in agentlines.render([edit])


def test_the_editor_echoing_the_agents_edit_is_not_the_user():
    lines = AgentLines()
    lines.expect("/w/f", AFTER)
    lines.wrote("/w/f", "f", BEFORE, AFTER, "s1", None)
    lines.editor_text("/w/f", AFTER)
    assert lines.take_user_edits("/w") == []


def test_the_agent_writing_over_its_own_span_keeps_the_first_before_text():
    lines = wrote()
    lines.wrote("/w/f", "f", AFTER, AFTER.replace("B", "BB\nBBB"), "s2", "explore")
    first = lines.spans("/w/f")[0]
    assert (first.start, first.end, first.old_text) == (1, 3, "b\n")
    assert first.author.submission_id == "s2" and first.author.subagent == "explore"
    assert starts(lines)[1] == (5, 7)  # the agent's insertion above moved it


def test_a_revert_puts_the_hunk_back_and_moves_the_others():
    lines = wrote()
    second = lines.spans("/w/f")[1]
    new, *_ = revert_text(AFTER, second)
    assert new == "a\nB\nc\nd\ne\n"
    first = lines.spans("/w/f")[0]
    lines.reverted("/w/f", second.id, new)
    assert lines.spans("/w/f") == [first]


def test_a_revert_of_lines_the_user_changed_is_refused_with_the_line():
    lines = wrote()
    changed = AFTER.replace("F", "F!")
    lines.editor_text("/w/f", changed)
    second = lines.spans("/w/f")[1]
    assert changed_since(second, changed) == "line 6 changed since the agent wrote it; reverting would lose that change"
    assert changed_since(lines.spans("/w/f")[0], changed) is None


def test_the_last_line_without_newline_stays_so():
    lines = AgentLines()
    lines.wrote("/w/g", "g", "x\ny", "x\nz", "s1", None)
    [span] = lines.spans("/w/g")
    new, sl, sc, el, ec, text = revert_text("x\nz", span)
    assert new == "x\ny" and (sl, sc, el, ec, text) == (1, 0, 1, 1, "y")


def test_the_diff_told_is_capped():
    lines = AgentLines()
    big_before = "".join(f"{i}\n" for i in range(200))
    big_after = "".join(f"agent {i}\n" for i in range(200))
    lines.wrote("/w/h", "h", big_before, big_after, "s1", None)
    lines.editor_text("/w/h", "".join(f"user {i}\n" for i in range(200)))
    [edit] = lines.take_user_edits("/w")
    assert len(edit.diff.splitlines()) <= agentlines.MAX_DIFF_LINES + 1 and "read h for the rest" in edit.diff
    assert lines.find("not-an-id") is None


def test_a_change_not_from_the_editor_moves_the_spans_and_tells_nothing():
    lines = wrote()
    lines.disk_text("/w/f", "top\n" + AFTER.replace("B", "Bee"))  # a shell command's, perhaps the agent's
    assert starts(lines) == [(2, 3), (5, 7)]
    assert lines.take_user_edits("/w") == []
    lines.wrote("/w/f", "f", "x\n" + AFTER, "x\n" + AFTER, "s2", None)  # an unseen change before a write
    assert lines.take_user_edits("/w") == []
