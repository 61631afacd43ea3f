"""Tool output that costs few tokens: read's line numbers, grep grouped by file, todoWrite."""

from __future__ import annotations

from coder_ls.agent.tools import build_default_tools
from coder_ls.agent.tools.fileio import numbered
from coder_ls.agent.tools.search import format_matches

TWENTY = [f"line {i}: the quick brown fox jumps over" for i in range(1, 21)]


def test_numbers_are_not_padded() -> None:
    text = numbered(TWENTY, 1)
    rows = text.split("\n")
    assert rows[0] == "1\tline 1: the quick brown fox jumps over"
    assert rows[19] == "20\tline 20: the quick brown fox jumps over"
    # the whole overhead is the number and a tab on each line
    overhead = len(text) - len("\n".join(TWENTY))
    assert overhead == sum(len(str(n)) + 1 for n in range(1, 21))


def test_numbers_start_at_the_offset_and_cut_long_lines() -> None:
    rows = numbered(["a", "b" * 50], 998, max_line=10).split("\n")
    assert rows[0] == "998\ta"
    assert rows[1] == "999\t" + "b" * 10 + "… [40 more characters]"


def test_grep_groups_matches_by_file() -> None:
    matches = [("src/a.py", 3, "x = 1"), ("src/a.py", 9, "y = x"), ("b.txt", 1, "x")]
    assert format_matches(matches, 10) == "src/a.py\n3:x = 1\n9:y = x\nb.txt\n1:x"
    flat = "\n".join(f"{p}:{n}:{t}" for p, n, t in matches)
    assert len(format_matches(matches, 10)) < len(flat)
    # one match per file: as long as the flat form, never longer
    single = [("a", 1, "x"), ("b", 2, "y")]
    assert len(format_matches(single, 10)) == len("a:1:x\nb:2:y")


def test_grep_cap_note() -> None:
    matches = [("f", n, "hit") for n in range(1, 6)]
    out = format_matches(matches, 3).split("\n")
    assert out[:4] == ["f", "1:hit", "2:hit", "3:hit"]
    assert "more than 3 matches" in out[4]


async def test_todo_write_does_not_echo_the_list(harness) -> None:
    reg = build_default_tools()
    todos = [{"content": "a long task description " * 4, "status": "in_progress"}, {"content": "ship"}]
    out = await reg.get("todoWrite").call(harness.ctx, {"todos": todos})
    assert out.text == "Task list updated (0/2 done)."
    listing = (await reg.get("todoRead").call(harness.ctx, {})).text
    assert "a long task description" in listing
