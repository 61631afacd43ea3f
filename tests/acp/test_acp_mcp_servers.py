"""`McpHub.add_client_servers`, the seam the ACP edge uses: unit tests below the e2e test."""

from __future__ import annotations

from pathlib import Path

from coder_ls.mcp.hub import McpHub
from coder_ls.protocol.config import Config, McpServerConfig


def _hub(root: Path, user: dict[str, McpServerConfig]) -> McpHub:
    config = Config(mcp_servers=user)
    env = {"PATH": "/usr/bin", "ANTHROPIC_API_KEY": "sk-secret", "XDG_STATE_HOME": str(root.parent / "state")}
    return McpHub(root, env, config=lambda: config, trusted=lambda: False)


def test_the_clients_servers_are_the_users_a_bad_one_adds_none_and_the_setting_wins(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    hub = _hub(root, {"mine": McpServerConfig(command="setting-server")})
    good = McpServerConfig(type="stdio", command="time-server", args=["${ANTHROPIC_API_KEY:-none}"])
    bad = McpServerConfig(type="http", url="file:///etc/passwd")
    problems = hub.add_client_servers({"time": good, "web": bad})
    assert len(problems) == 1 and "web" in problems[0] and "http" in problems[0], problems
    assert [s.name for s in hub.specs()] == ["mine"]  # nothing of the bad list was added
    assert hub.add_client_servers({"time": good, "mine": McpServerConfig(command="editor-server")}) == []
    specs = {s.name: s for s in hub.specs()}
    assert specs["time"].origin == "user" and specs["time"].command == "time-server"  # untrusted folder: started
    assert specs["time"].args == ("none",)  # no secret reaches a server through ${VAR}
    assert specs["mine"].command == "setting-server"  # the user's setting before the editor's list
    assert any("already defined" in p for p in hub.problems)
    assert hub.add_client_servers({"time": McpServerConfig(command="other")}) == []
    assert {s.name: s.command for s in hub.specs()}["time"] == "other"  # a name given again is replaced
