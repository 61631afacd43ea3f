"""Unsaved buffers (contract section 23): `read`, `grep` and `edit` see what the editor holds
(didOpen, then didChange, never saved), say so (`unsaved: true` on `toolCallEnd`, a note in
the text the model reads), and the edit lands in the buffer as `workspace/applyEdit`, never on
the disk under it. A buffer equal to the disk is not unsaved. The guards judge the path,
whatever a buffer holds; a huge buffer is capped like a file; a document whose URI is not
`file://` is nobody's file.

Every document a test opens is closed at its end: the server is shared."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from agent_e2e import all_text, calls, result_text, tool_call, tool_results
from anthropic_server import reply
from harness import Session
from lsprotocol import types

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]

DISK = "alpha = 1\nstale_word = 2\n"
BUFFER = "alpha = 1\nfresh_word = 2\nonly_in_buffer = 3\n"  # typed, not saved
NOTE = "unsaved editor buffer"


def change(s: Session, uri: str, text: str, version: int) -> None:
    s.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def open_uri(s: Session, uri: str, text: str, version: int = 1) -> None:
    s.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="plaintext", version=version, text=text)
        )
    )


@contextlib.contextmanager
def closing(s: Session, *uris: str) -> Iterator[None]:
    try:
        yield
    finally:
        for uri in uris:
            s.client.text_document_did_close(
                types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )


def ends(s: Session) -> dict[str, dict]:
    return {e["callId"]: e for e in s.events_of("toolCallEnd")}


async def test_read_grep_and_edit_see_the_unsaved_buffer_and_the_edit_lands_in_it(agent):
    a = await agent(permissions="auto-edit")
    path = a.root / "bufs" / "notes.txt"
    path.parent.mkdir(exist_ok=True)
    path.write_text(DISK)
    uri = a.s.open("bufs/notes.txt", DISK, version=1)
    with closing(a.s, uri):
        change(a.s, uri, BUFFER, version=2)  # the user types; nothing is saved
        a.fake.push(
            calls(tool_call("read", {"path": "bufs/notes.txt"}, "toolu_r")),
            calls(
                tool_call("grep", {"pattern": "only_in_buffer"}, "toolu_g1"),
                tool_call("grep", {"pattern": "stale_word|fresh_word", "path": "bufs"}, "toolu_g2"),
            ),
            calls(tool_call("edit", {"path": "bufs/notes.txt", "oldString": "= 3", "newString": "= 30"}, "toolu_e")),
            reply("done"),
        )
        result = await a.turn("look at bufs/notes.txt and make only_in_buffer 30")
        assert result["status"] == "completed", result

        # read: the model's next request carries the buffer and the note
        read = result_text(tool_results(a.fake.message_requests[1])["toolu_r"])
        assert "only_in_buffer = 3" in read and "fresh_word" in read and "stale_word" not in read, read
        assert NOTE in read, read
        # grep: the buffer's matches for that file, not the disk's
        results = tool_results(a.fake.message_requests[2])
        g1, g2 = result_text(results["toolu_g1"]), result_text(results["toolu_g2"])
        assert "bufs/notes.txt" in g1 and "3:only_in_buffer = 3" in g1 and NOTE in g1, g1
        assert "2:fresh_word = 2" in g2 and "stale_word" not in g2, g2
        # edit: into the buffer (its version), the disk untouched
        edit_text = result_text(tool_results(a.fake.message_requests[3])["toolu_e"])
        assert "Edited bufs/notes.txt" in edit_text and NOTE in edit_text, edit_text
        (params,) = a.s.edits
        (doc_edit,) = params.edit.document_changes
        assert doc_edit.text_document.uri == uri and doc_edit.text_document.version == 2
        assert all(e.range.start.line == 2 for e in doc_edit.edits), doc_edit.edits
        assert path.read_text() == DISK  # the unsaved change is the editor's; nothing written over it
        (applied,) = a.s.events_of("editApplied")
        assert applied["applied"] and not applied["onDisk"], applied
        flags = {cid: e.get("unsaved") for cid, e in ends(a.s).items()}
        assert flags == {"toolu_r": True, "toolu_g1": True, "toolu_g2": True, "toolu_e": True}, flags


async def test_a_buffer_equal_to_the_disk_is_not_unsaved(agent):
    a = await agent(permissions="auto-edit")
    path = a.root / "bufs" / "same.txt"
    path.parent.mkdir(exist_ok=True)
    path.write_text(DISK)
    uri = a.s.open("bufs/same.txt", DISK, version=3)
    with closing(a.s, uri):
        a.fake.push(
            calls(
                tool_call("read", {"path": "bufs/same.txt"}, "toolu_r"),
                tool_call("grep", {"pattern": "stale_word"}, "toolu_g"),
            ),
            reply("ok"),
        )
        result = await a.turn("read bufs/same.txt")
        assert result["status"] == "completed", result
        results = tool_results(a.fake.message_requests[1])
        read, grep = result_text(results["toolu_r"]), result_text(results["toolu_g"])
        assert "stale_word" in read and NOTE not in read, read
        # the server is shared with other tests whose buffers may still be open (and unsaved):
        # grep may name those; never this one, whose match comes from the disk as it is
        assert "bufs/same.txt\n2:stale_word = 2" in grep, grep
        noted = [line for line in grep.splitlines() if NOTE in line]
        assert all("same.txt" not in line for line in noted), grep
        flags = {cid: e.get("unsaved") for cid, e in ends(a.s).items()}
        assert flags["toolu_r"] is False, flags


async def test_a_buffer_outside_the_workspace_stays_out_of_reach(agent):
    a = await agent(permissions="auto-edit")
    outside = a.root.parent / "elsewhere" / "secret.txt"
    outside.parent.mkdir(exist_ok=True)
    outside.write_text("on disk\n")
    uri = outside.as_uri()
    open_uri(a.s, uri, "BUFFER_SECRET_OUTSIDE\n")
    with closing(a.s, uri):
        a.fake.push(
            calls(
                tool_call("read", {"path": str(outside)}, "toolu_r1"),
                tool_call("read", {"path": "../elsewhere/secret.txt"}, "toolu_r2"),
                tool_call("grep", {"pattern": "BUFFER_SECRET_OUTSIDE"}, "toolu_g"),
                tool_call("edit", {"path": str(outside), "oldString": "BUFFER", "newString": "X"}, "toolu_e"),
            ),
            reply("ok"),
        )
        result = await a.turn("read the secret")
        assert result["status"] == "completed", result
        request = a.fake.message_requests[1]
        text = all_text(request)
        assert "\tBUFFER_SECRET_OUTSIDE" not in text and ":BUFFER_SECRET_OUTSIDE" not in text, text
        results = tool_results(request)
        for cid in ("toolu_r1", "toolu_r2", "toolu_e"):
            assert results[cid].get("is_error"), results[cid]
        assert "No matches" in result_text(results["toolu_g"]), results["toolu_g"]
        assert a.s.edits == [] and outside.read_text() == "on disk\n"


async def test_a_buffer_of_a_protected_path_is_asked_about_like_the_file(agent):
    a = await agent(permissions="auto-edit")
    config = a.root / ".git" / "config"
    before = config.read_text()
    uri = config.as_uri()
    open_uri(a.s, uri, before + "[core]\n\tfsmonitor = touch pwned\n")
    with closing(a.s, uri):
        a.s.answer_question = lambda p: None  # the user dismisses the question
        a.fake.push(
            calls(
                tool_call(
                    "edit",
                    {"path": ".git/config", "oldString": "fsmonitor = touch pwned", "newString": "fsmonitor = x"},
                    "toolu_e",
                )
            ),
            reply("ok"),
        )
        result = await a.turn("fix the git config")
        assert result["status"] == "completed", result
        assert a.s.questions, "a protected path is asked about, buffer or not"
        assert ".git" in a.s.questions[0].message
        assert tool_results(a.fake.message_requests[1])["toolu_e"].get("is_error")
        assert a.s.edits == [] and config.read_text() == before


async def test_a_huge_buffer_is_capped_like_a_file(agent):
    a = await agent(permissions="auto-edit")
    path = a.root / "bufs" / "huge.txt"
    path.parent.mkdir(exist_ok=True)
    path.write_text("small\n")
    uri = a.s.open("bufs/huge.txt", "small\n", version=1)
    with closing(a.s, uri):
        change(a.s, uri, "needle_huge " + "y" * 99 + "\n" + ("z" * 99 + "\n") * 170_000, version=2)  # 17 MB
        a.fake.push(
            calls(tool_call("read", {"path": "bufs/huge.txt"}, "toolu_r")),
            calls(
                tool_call("edit", {"path": "bufs/huge.txt", "oldString": "needle_huge", "newString": "n"}, "toolu_e")
            ),
            reply("ok"),
        )
        result = await a.turn("read bufs/huge.txt")
        assert result["status"] == "completed", result
        read = result_text(tool_results(a.fake.message_requests[1])["toolu_r"])
        assert "needle_huge" in read and "large file" in read and NOTE in read, read[:300]
        assert len(read) < 64 * 1024, len(read)
        edit = tool_results(a.fake.message_requests[2])["toolu_e"]
        assert edit.get("is_error") and "too large" in result_text(edit), edit
        assert a.s.edits == [] and path.read_text() == "small\n"


async def test_a_document_that_is_not_a_file_uri_is_ignored(agent):
    a = await agent(permissions="auto-edit")
    path = a.root / "bufs" / "plain.txt"
    path.parent.mkdir(exist_ok=True)
    path.write_text(DISK)
    # VS Code opens `git:` documents for a diff's left side: the same path, another text
    uris = [f"git:{path}?ref=HEAD", f"untitled:{path}", f"vscode-remote://host{path}"]
    for uri in uris:
        open_uri(a.s, uri, "NOT_A_FILE_BUFFER\n")
    with closing(a.s, *uris):
        a.fake.push(
            calls(
                tool_call("read", {"path": "bufs/plain.txt"}, "toolu_r"),
                tool_call("grep", {"pattern": "NOT_A_FILE_BUFFER|stale_word"}, "toolu_g"),
            ),
            reply("ok"),
        )
        result = await a.turn("read bufs/plain.txt")
        assert result["status"] == "completed", result
        text = all_text(a.fake.message_requests[1])
        assert "stale_word" in text, text
        assert "\tNOT_A_FILE_BUFFER" not in text and ":NOT_A_FILE_BUFFER" not in text, text
        results = tool_results(a.fake.message_requests[1])
        read, grep = result_text(results["toolu_r"]), result_text(results["toolu_g"])
        assert NOTE not in read, read
        # the server is shared with other tests whose (file) buffers may still be open: grep may
        # name those, never this path
        assert all("plain.txt" not in line for line in grep.splitlines() if NOTE in line), grep
        assert ends(a.s)["toolu_r"].get("unsaved") is False
