"""The config merge below the end-to-end tests (tests/security/test_untrusted_config.py):
a workspace layer adds to the user's `rules` and `secrets.envNames` whatever shape it
tries (dotted keys, null, an empty list, duplicates), and the layers above the workspace
(the editor's settings, the user's) still replace as before."""

from __future__ import annotations

from typing import Any

from coder_ls.engine.config import Layer, resolve

USER = {"rules": [{"tool": "bash", "action": "deny", "command": "rm"}], "secrets": {"envNames": ["MY_TOKEN"]}}


def merged(workspace: dict[str, Any], above: dict[str, Any] | None = None):
    layers = [Layer("user", USER), Layer("workspace", workspace, adds_lists=True)]
    if above is not None:
        layers.append(Layer("initializationOptions", above))
    config, _ = resolve(layers)
    return config


def test_a_workspace_cannot_empty_the_users_lists_in_any_spelling() -> None:
    for ws in (
        {"secrets": {"envNames": []}, "rules": []},
        {"secrets.envNames": [], "rules": []},
        {"secrets": None, "rules": None},
        {"secrets": {"envNames": None}},
        {"secrets": {"envNames": "MY_TOKEN"}},
    ):
        config = merged(ws)
        assert config.secrets.env_names == ["MY_TOKEN"], ws
        assert [(r.action, r.command) for r in config.rules] == [("deny", "rm")], ws


def test_a_workspace_adds_its_entries_after_the_users() -> None:
    ws = {"rules": [{"tool": "bash", "action": "ask", "command": "make"}] * 2, "secrets.envNames": ["MY_TOKEN", "X"]}
    config = merged(ws)
    assert [(r.action, r.command) for r in config.rules] == [("deny", "rm"), ("ask", "make"), ("ask", "make")]
    assert config.secrets.env_names == ["MY_TOKEN", "X"]


def test_the_editors_settings_still_replace_a_list() -> None:
    config = merged({"rules": [{"tool": "bash", "action": "ask", "command": "make"}]}, {"secrets": {"envNames": []}})
    assert config.secrets.env_names == []  # the user's own editor setting: the user's call
