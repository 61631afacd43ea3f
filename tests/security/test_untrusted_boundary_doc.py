"""The untrusted-workspace list is one table in the docs and one place in the code: every
row of `guard/trust.BOUNDARY` is a row of the table in docs/security.md, word for word,
and the table has no row the code does not."""

from __future__ import annotations

from pathlib import Path

from coder_ls.guard.trust import BOUNDARY

DOC = Path(__file__).parents[2] / "docs" / "security.md"


def doc_rows() -> list[list[str]]:
    text = DOC.read_text()
    section = text.split("## The untrusted workspace", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines[1:]]  # without the header


def test_the_doc_table_is_the_code_table() -> None:
    expected = [[f"`{r.area}`", r.files, r.untrusted, r.trusted] for r in BOUNDARY]
    assert doc_rows() == expected


def test_every_area_the_issue_names_has_a_row() -> None:
    areas = {r.area for r in BOUNDARY}
    assert areas == {"config", "commands", "agents", "tasks", "sessions", "checkpoints", "mcp", "hooks"}
    for row in BOUNDARY:
        assert row.untrusted and row.trusted and row.files
