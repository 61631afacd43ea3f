"""docs/security.md's "Images and `@` references" and "The threat model for `!`" agree
with the table of what backs each of their sentences (tests/security/security_claims.py):
a sentence added to those sections without an entry fails here, and so does an entry
whose sentence is gone, a claim without tests, a test that does not exist, or a mutation
that names nothing. `scripts/mutate_claims.py` shows, claim by claim, that taking the
promise out of the code makes its tests fail."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from security.security_claims import ENTRIES, MUTATIONS, doc_sentences

REPO = Path(__file__).resolve().parents[2]


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_every_sentence_of_the_sections_has_an_entry():
    missing = [s for s in doc_sentences() if not any(_flat(e.quote) in s for e in ENTRIES)]
    assert missing == [], "sentences of docs/security.md with no entry in security_claims.ENTRIES:\n" + "\n".join(
        missing
    )


def test_every_entry_quotes_one_sentence_of_the_sections():
    sentences = doc_sentences()
    stale = [e.quote for e in ENTRIES if sum(_flat(e.quote) in s for s in sentences) != 1]
    assert stale == [], f"entries whose quote is in no sentence, or in several: {stale}"


def test_every_claim_names_tests_and_a_figure_its_holder():
    for e in ENTRIES:
        if e.kind == "claim":
            assert e.tests, e.quote
        else:
            assert e.kind in ("limit", "figure", "context", "heading", "index"), e
            assert e.tests or e.why, e.quote


def _functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def test_every_named_test_exists():
    for e in ENTRIES:
        for test in e.tests:
            file, _, name = test.partition("::")
            assert name in _functions(REPO / file), f"{test} (for {e.quote!r}) does not exist"


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_every_mutation_names_a_guard_that_exists(name):
    module_name, attr, _ = MUTATIONS[name]
    target = importlib.import_module(module_name)
    for part in attr.split("."):
        target = getattr(target, part)
    assert any(name in e.mutations for e in ENTRIES), f"{name} backs no claim"
