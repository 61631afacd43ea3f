"""The one rule for text UTF-8 cannot carry (`protocol/wiretext.py`), and the tools that
apply it: a name that is not UTF-8 shown as `\\xNN`, taken back by the file tools."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import pytest

from coder_ls.agent.paths import PathError, resolve_path
from coder_ls.agent.tools.search import rg_matches
from coder_ls.protocol.wiretext import CarryingEncoder, carried, carried_value, name_from_shown, shown_name


def test_carried_shows_bytes_and_replaces_other_lone_surrogates() -> None:
    plain = "déjà vu ✓ \U0001f600"
    assert carried(plain) is plain
    assert carried(os.fsdecode(b"caf\xe9.txt")) == "caf\\xe9.txt"
    assert carried("a\ud800b") == "a\ufffdb"
    assert carried_value({"k\udcff": ["x\udcff", ("y",), 3]}) == {"k\\xff": ["x\\xff", ["y"], 3]}


def test_shown_names_round_trip() -> None:
    for raw in (b"caf\xe9.txt", b"two\nlines", b"tab\there", b"del\x7f", b"plain.txt", b"\xff\xfe"):
        name = os.fsdecode(raw)
        shown = shown_name(name)
        assert "\n" not in shown and shown.encode("utf-8")
        assert name_from_shown(shown) == name
    assert name_from_shown("keep \\x41 and \\x00") == "keep \\x41 and \\x00"  # no escapes of ours


def test_the_carrying_encoder_never_refuses() -> None:
    class Entry(msgspec.Struct):
        text: str

    assert CarryingEncoder().encode(Entry("ok")) == b'{"text":"ok"}'
    assert msgspec.json.decode(CarryingEncoder().encode(Entry("n\udce9"))) == {"text": "n\\xe9"}


def test_resolve_path_takes_the_shown_spelling_back(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    odd = Path(os.fsdecode(os.fsencode(root) + b"/caf\xe9.txt"))
    odd.write_text("x")
    assert resolve_path(root, "caf\\xe9.txt") == odd
    (root / "lit\\xe9").write_text("a name that really holds a backslash")
    assert resolve_path(root, "lit\\xe9") == root / "lit\\xe9"  # the name as written wins
    with pytest.raises(PathError, match="lone surrogate"):
        resolve_path(root, "bad\ud800.txt")


def test_rg_null_output_keeps_odd_names_whole() -> None:
    out = b"./caf\xe9.txt\x001:needle\n./two\nlines:x.txt\x0012:a: needle \xff\n"
    assert rg_matches(out) == [
        (os.fsdecode(b"caf\xe9.txt"), 1, "needle"),
        ("two\nlines:x.txt", 12, "a: needle \ufffd"),
    ]
