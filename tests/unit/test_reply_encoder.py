"""`lsp/replies.py`: the bytes sent for a result are those msgspec encodes for it, whether
the catalog's bytes were kept from an earlier answer or not."""

from __future__ import annotations

import msgspec

from coder_ls.lsp.replies import ReplyEncoder
from coder_ls.protocol.results import CommandCatalog, CommandInfo, CommandResult, HelpData


def entry(name: str, description: str = "d") -> CommandInfo:
    return CommandInfo(name=name, description=description, argument_hint="", kind="prompt", source="user")


def result(sid: str, data: object) -> CommandResult:
    return CommandResult(session_id=sid, submission_id=sid + "-sub", mode="command", status="completed", data=data)  # type: ignore[arg-type]


def test_a_catalog_given_again_is_encoded_as_a_fresh_one_would_be():
    enc = ReplyEncoder()
    catalog = CommandCatalog(commands=[entry("a"), entry("b", "Überprüfe ✓")])
    for sid in ("s1", "s2", "s3"):  # the same catalog object in three answers
        r = result(sid, catalog)
        assert bytes(enc.encode(r)) == msgspec.json.encode(r)


def test_another_catalog_object_is_encoded_anew():
    enc = ReplyEncoder()
    first = CommandCatalog(commands=[entry("a")])
    enc.encode(result("s", first))
    second = CommandCatalog(commands=[entry("a", "changed")])
    assert b"changed" in bytes(enc.encode(result("s", second)))
    other = result("s", HelpData(commands=[entry("h")]))
    assert bytes(enc.encode(other)) == msgspec.json.encode(other)


def test_text_utf8_cannot_carry_is_sent_shown_every_time():
    """A byte that is not UTF-8 (surrogate-escaped) as `\\xNN`, another lone surrogate as
    U+FFFD: valid UTF-8 JSON, never a `\\udcff` escape strict clients refuse."""
    enc = ReplyEncoder()
    odd = CommandCatalog(commands=[entry("x", "bad \udcff name \ud800")])
    for _ in range(2):
        out = bytes(enc.encode(result("s", odd)))
        assert msgspec.json.decode(out)["data"]["commands"][0]["description"] == "bad \\xff name \ufffd"
