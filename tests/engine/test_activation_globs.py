"""Conditional skills read their `paths:` globs as every other glob here (`coder_ls.globs`):
the braces and classes Claude Code's skills use (`**/*.{ts,tsx}`) activate them."""

from __future__ import annotations

from coder_ls.commands.activation import activated_by


def test_braces_and_classes_activate_a_skill() -> None:
    assert activated_by(["src/**/*.{ts,tsx}"], ["README.md", "src/ui/app.tsx"]) == "src/ui/app.tsx"
    assert activated_by(["*.[ch]"], ["lib/x.c"]) == "lib/x.c"
    assert activated_by(["src/**/*.{ts,tsx}"], ["src/app.js", "test/a.ts"]) is None


def test_a_glob_without_a_slash_matches_the_name_at_any_depth_and_stays_in_its_segment() -> None:
    assert activated_by(["*.sql"], ["db/migrations/001.sql"]) == "db/migrations/001.sql"
    assert activated_by(["./src/*.py"], ["src/a.py"]) == "src/a.py"
    assert activated_by(["src/*.py"], ["src/pkg/a.py"]) is None
    assert activated_by(["  "], ["a.py"]) is None
