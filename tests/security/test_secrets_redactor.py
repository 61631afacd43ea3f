"""The redactor (`coder_ls/guard/redact.py`) against an attacker's ways of printing a
secret: whole, cut across output chunks at every position, base64 at every alignment."""

from __future__ import annotations

import base64

from hypothesis import given, settings
from hypothesis import strategies as st

from coder_ls.guard.redact import Redactor, StreamRedactor

KEY = "sk-ant-api03-Zx9_kQ-0123456789abcdefSECRET"
SECRETS = {"ANTHROPIC_API_KEY": KEY, "MY_TOKEN": "ghp_tok+/en_98765", "SHORT": "abc"}


def test_values_and_base64_forms_are_replaced_short_values_are_not() -> None:
    r = Redactor(SECRETS)
    assert r.text(f"ANTHROPIC_API_KEY={KEY}\n") == "ANTHROPIC_API_KEY=[redacted: ANTHROPIC_API_KEY]\n"
    assert r.text("SHORT=abc") == "SHORT=abc"  # under 8 characters: too common to hide
    for prefix in (b"", b"x", b"xy", b"ANTHROPIC_API_KEY="):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = encode(prefix + KEY.encode() + b"\n").decode()
            out = r.text(encoded)
            assert "[redacted: ANTHROPIC_API_KEY (base64)]" in out, (prefix, encoded)
            # no 12-character run of the key's encoding survives
            alone = encode(KEY.encode()).decode()
            assert not any(alone[i : i + 12] in out for i in range(4, len(alone) - 16)), out


def test_nothing_to_hide_changes_nothing() -> None:
    r = Redactor({})
    assert not r and r.text("anything") == "anything"
    assert Redactor.for_names(["X"], environ={"PATH": "/bin"}).text("/bin") == "/bin"


@settings(max_examples=300, deadline=None)
@given(
    before=st.text(max_size=40),
    after=st.text(max_size=40),
    cuts=st.lists(st.integers(0, 200), max_size=6),
)
def test_a_secret_cut_across_chunks_is_still_redacted(before: str, after: str, cuts: list[int]) -> None:
    r = Redactor(SECRETS)
    text = before + KEY + after
    positions = sorted({c % (len(text) + 1) for c in cuts})
    chunks = [text[a:b] for a, b in zip([0, *positions], [*positions, len(text)], strict=True)]
    stream = StreamRedactor(r)
    out = "".join(stream.feed(c) for c in chunks) + stream.flush()
    assert KEY not in out
    assert out == r.text(text)  # the same as redacting the whole output at once
