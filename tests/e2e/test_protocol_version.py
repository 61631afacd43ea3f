"""The editor contract's version at `initialize` (contract section 24).

The server announces `capabilities.experimental.coder.protocolVersion` (and its own version in
`serverInfo`); a client that sends `initializationOptions.protocolVersion` of another MAJOR gets
one `window/showMessage` naming both versions and what to update, and keeps working; a client
that sends nothing, or the same MAJOR, gets no message (and `protocolVersion` is never taken
for a setting).
"""

from __future__ import annotations

import asyncio

import pytest
from harness import init_git, lsp_session
from lsprotocol import types

from coder_ls import PROTOCOL_VERSION, __version__
from coder_ls.protocolversion import MISMATCH_PREFIX


def _said(s) -> list[types.ShowMessageParams]:
    return [m for m in s.client.messages if m.type in (types.MessageType.Error, types.MessageType.Warning)]


@pytest.mark.parametrize("options", [None, {}, {"protocolVersion": PROTOCOL_VERSION}, {"protocolVersion": 1}])
async def test_the_server_says_its_version_and_a_client_of_the_same_major_hears_nothing(tmp_path, options):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root, init_options=options) as s:
        assert s.init_result is not None
        experimental = s.init_result.capabilities.experimental
        assert experimental == {"coder": {"protocolVersion": PROTOCOL_VERSION}}
        assert s.init_result.server_info is not None
        assert (s.init_result.server_info.name, s.init_result.server_info.version) == ("coder-ls", __version__)
        result = await s.execute("coder.input", {"text": "/help"})
        assert result["mode"] == "command" and result["status"] == "completed"
        await asyncio.sleep(0.2)
        assert _said(s) == [], [m.message for m in _said(s)]


@pytest.mark.parametrize(
    ("theirs", "todo"),
    [("2.0", "update coder-ls"), ("0.9", "update the editor's Coder extension or plugin")],
)
async def test_a_client_of_another_major_is_told_what_to_update_and_keeps_working(tmp_path, theirs, todo):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root, init_options={"protocolVersion": theirs, "permissions": "balanced"}) as s:
        await s.wait_for(lambda: _said(s))
        [said] = _said(s)
        assert said.type == types.MessageType.Warning
        assert said.message.startswith(MISMATCH_PREFIX)
        assert f"protocol {PROTOCOL_VERSION}" in said.message and f"speaks {theirs}" in said.message
        assert todo in said.message
        result = await s.execute("coder.input", {"text": "/help"})
        assert result["mode"] == "command" and result["status"] == "completed"
