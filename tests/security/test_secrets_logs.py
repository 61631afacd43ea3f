"""Secrets: the log redaction filter and the one environment builder."""

from __future__ import annotations

import logging

import pytest

from coder_ls.environ import child_env
from coder_ls.lsp.logs import REDACTED, add_secret_names, setup_logging

KEY = "sk-ant-test-logs-0123456789SECRET"
TOKEN = "my-own-token-value-1234"


@pytest.fixture
def restore_logging():
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    for h in root.handlers:
        h.close()
    root.handlers, root.level = handlers, level


def test_every_logger_is_redacted_in_the_log_file(tmp_path, monkeypatch, restore_logging):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("MY_TOKEN", TOKEN)
    log_file = tmp_path / "server.log"
    setup_logging("debug", str(log_file))
    add_secret_names(["MY_TOKEN"])
    sdk = logging.getLogger("anthropic._base_client")
    sdk.debug("Request options: %s", {"headers": {"x-api-key": KEY}, "note": TOKEN})
    logging.getLogger("coder_ls.x").info(f"literal {KEY} in the message")
    try:
        raise RuntimeError(f"auth failed with {KEY}")
    except RuntimeError:
        logging.getLogger("httpx").exception("request failed")
    for h in logging.getLogger().handlers:
        h.flush()
    text = log_file.read_text()
    assert "Request options" in text and "literal" in text and "auth failed with" in text
    assert KEY not in text and TOKEN not in text
    assert text.count(REDACTED) >= 4


def test_child_env_drops_the_keys_and_named_secrets(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", KEY + "x")
    monkeypatch.setenv("MY_TOKEN", TOKEN)
    env = child_env(["MY_TOKEN"], set_={"ANTHROPIC_API_KEY": "sneaky", "PAGER": "cat"})
    assert "ANTHROPIC_API_KEY" not in env and "ANTHROPIC_AUTH_TOKEN" not in env and "MY_TOKEN" not in env
    assert env["PAGER"] == "cat" and env["PATH"]
