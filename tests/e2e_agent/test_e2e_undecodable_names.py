"""Names UTF-8 cannot carry, end to end over a real LSP client and the fake Messages API
(issue 36 item 6). A Linux file name is bytes: once `ls`, `glob` or `grep` listed one that
is not UTF-8, the session log and the provider's request refused the turn, and every later
prompt of the session failed with `internal_error` until `/new`. The rule
(`protocol/wiretext.py`): such a byte is shown as `\\xNN`, a control character in a listed
name too, and the file tools take that spelling back; a lone surrogate in the model's input
is no text (refused in a path)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_e2e import calls, requests, result_text, tool_call, tool_results
from anthropic_server import reply

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


@pytest.fixture
def made(shared_session) -> Iterator[list[bytes]]:
    """Names (bytes) the test leaves in the shared workspace: removed afterwards."""
    names: list[bytes] = []
    yield names
    root = os.fsencode(shared_session.root)
    for name in names:
        try:
            os.unlink(root + b"/" + name)
        except FileNotFoundError:
            pass


def on_disk(root: Path, name: bytes) -> bytes | None:
    try:
        with open(os.fsencode(root) + b"/" + name, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def make(root: Path, name: bytes, data: bytes, made: list[bytes]) -> None:
    made.append(name)
    fd = os.open(os.fsencode(root) + b"/" + name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


async def test_a_name_that_is_not_utf8_is_listed_read_and_written_and_the_session_goes_on(agent, made):
    a = await agent(permissions="yolo")
    make(a.root, b"caf\xe9.txt", b"needle in a latin-1 name\n", made)
    made.append(b"new\xff.txt")
    a.fake.push(
        calls(
            tool_call("ls", {}, "toolu_ls"),
            tool_call("glob", {"pattern": "*.txt"}, "toolu_glob"),
            tool_call("grep", {"pattern": "needle in a"}, "toolu_grep"),
        ),
        calls(
            tool_call("read", {"path": "caf\\xe9.txt"}, "toolu_read"),
            tool_call("write", {"path": "new\\xff.txt", "content": "made\n"}, "toolu_write"),
        ),
        reply("listed and read"),
    )
    result = await a.turn("list the files and read the odd one")
    assert result["status"] == "completed", result
    assert result["reply"] == "listed and read"
    results = tool_results(requests(a.fake)[-1])
    for call_id in ("toolu_ls", "toolu_glob", "toolu_grep"):
        assert "caf\\xe9.txt" in result_text(results[call_id]), (call_id, results[call_id])
    assert "needle in a latin-1 name" in result_text(results["toolu_read"]), results["toolu_read"]
    assert not results["toolu_write"].get("is_error"), results["toolu_write"]
    assert on_disk(a.root, b"new\xff.txt") == b"made\n"
    a.fake.push(reply("still here"))
    second = await a.turn("and now?")
    assert second["status"] == "completed", second
    assert second["reply"] == "still here"


async def test_a_newline_in_a_name_and_a_lone_surrogate_in_the_models_input(agent, made):
    a = await agent(permissions="yolo")
    made.append(b"two\nlines.txt")
    a.fake.push(
        calls(tool_call("write", {"path": "two\nlines.txt", "content": "two lines\n"}, "toolu_nl")),
        calls(
            tool_call("glob", {"pattern": "two*"}, "toolu_g"),
            tool_call("read", {"path": "two\\x0alines.txt"}, "toolu_r"),
            tool_call("read", {"path": "bad\ud800.txt"}, "toolu_s"),
        ),
        reply("made"),
    )
    result = await a.turn("make odd names")
    assert result["status"] == "completed", result
    assert result["reply"] == "made"
    results = tool_results(requests(a.fake)[-1])
    assert on_disk(a.root, b"two\nlines.txt") == b"two lines\n"
    # one line for the one name (the shared workspace may hold other `two*` files of other tests)
    listed = result_text(results["toolu_g"]).splitlines()
    assert "two\\x0alines.txt" in listed and "lines.txt" not in listed, results["toolu_g"]
    assert "two lines" in result_text(results["toolu_r"]), results["toolu_r"]
    assert results["toolu_s"].get("is_error") and "lone surrogate" in result_text(results["toolu_s"])
    a.fake.push(reply("next"))
    second = await a.turn("again")
    assert second["status"] == "completed", second
