"""`coder.input {replaces}` (edit and resend) crosses the LSP edge into the operation; ACP
never sends it."""

from __future__ import annotations

import pytest

from coder_ls.lsp.commands import BadArguments, decode
from coder_ls.protocol.ops import UserInput


def test_replaces_reaches_the_operation() -> None:
    op, sid = decode("coder.input", [{"text": "again", "replaces": "sub-1", "sessionId": "s"}], [])
    assert isinstance(op, UserInput) and op.replaces == "sub-1" and sid == "s"
    op, _ = decode("coder.input", [{"text": "plain"}], [])
    assert isinstance(op, UserInput) and op.replaces is None


@pytest.mark.parametrize("bad", ["", "   "])
def test_an_empty_replaces_is_invalid_params(bad: str) -> None:
    with pytest.raises(BadArguments, match="replaces"):
        decode("coder.input", [{"text": "again", "replaces": bad}], [])
