"""Shared test setup: make `tests/` importable for the harness and the fakes."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).parent
for sub in (TESTS, TESTS / "fakes", TESTS / "e2e_agent"):
    if str(sub) not in sys.path:
        sys.path.insert(0, str(sub))
