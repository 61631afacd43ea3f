"""Contract section 23, "What the user changed" and "Attribution", over a real LSP client:
the scripted agent edits a file; the user changes one of its lines (a versioned didChange);
the next request to the fake Messages API carries that change as a diff, once; code lenses
on the agent's lines name the submission; a lens's command reverts its hunk (recorded:
`/undo` puts it back) and refuses, with the reason, a hunk the user changed since.
Attacks: a forged hunk id, a hunk of another file, a path outside the workspace; and a
change to a file the agent never touched tells the model nothing."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from agent_e2e import all_text, api_env, calls, last_user_text, requests, tool_call
from anthropic_server import FakeAnthropicServer, reply
from conftest import fix_code_action_structure
from harness import Session, full_caps, lsp_session
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="package")

BEFORE = "def area(w, h):\n    return w + h\n\n\ndef half(x):\n    return x / 2\n"
EDITS = {
    "path": "shapes.py",
    "edits": [
        {"oldString": "return w + h", "newString": "return w * h"},
        {"oldString": "def half(x):\n", "newString": "def half(x):\n    # integer halves stay floats\n"},
    ],
}
AFTER = "def area(w, h):\n    return w * h\n\n\ndef half(x):\n    # integer halves stay floats\n    return x / 2\n"
PROMPT = "fix area and half in shapes please"
NOTE = "edited lines you changed in this session"


def lens_caps() -> types.ClientCapabilities:
    caps = full_caps()
    assert caps.workspace is not None
    caps.workspace.code_lens = types.CodeLensWorkspaceClientCapabilities(refresh_support=True)
    return caps


@contextlib.asynccontextmanager
async def server(root: Path, fake: FakeAnthropicServer) -> AsyncIterator[tuple[Session, list[Any]]]:
    (root / "shapes.py").write_text(BEFORE)
    refreshes: list[Any] = []
    async with lsp_session(root, caps=lens_caps(), env=api_env(fake)) as s:
        fix_code_action_structure(s)

        @s.client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
        def on_refresh(ls: Any, params: Any) -> None:
            refreshes.append(params)

        s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"coder": {"permissions": "yolo"}})
        )
        yield s, refreshes


def change_line(s: Session, uri: str, version: int, line: int, column: int, old: str, new: str) -> None:
    """The user retypes `old` at `line`:`column` (0-based) as `new`: one ranged change."""
    s.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=line, character=column),
                        end=types.Position(line=line, character=column + len(old)),
                    ),
                    text=new,
                )
            ],
        )
    )


async def lenses(s: Session, uri: str) -> list[types.CodeLens]:
    got = await s.client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    return sorted(got or [], key=lambda lens: lens.range.start.line)


def apply_edit(text: str, edits: list[types.TextEdit]) -> str:
    lines = text.splitlines(keepends=True)
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        start, end = e.range.start, e.range.end
        offset = sum(len(x) for x in lines[: start.line]) + start.character
        end_offset = sum(len(x) for x in lines[: end.line]) + end.character
        text = text[:offset] + e.new_text + text[end_offset:]
        lines = text.splitlines(keepends=True)
    return text


class Editor:
    """The client's buffer of one document: applies the server's edits and says so (didChange)."""

    def __init__(self, s: Session, rel: str, text: str) -> None:
        self.s, self.text, self.version = s, text, 1
        self.uri = s.open(rel, text, version=1)
        s.answer_edit = self.answer

    def answer(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        for doc_edit in params.edit.document_changes or []:
            assert doc_edit.text_document.uri == self.uri
            self.replace(apply_edit(self.text, list(doc_edit.edits)))
        return types.ApplyWorkspaceEditResult(applied=True)

    def replace(self, text: str) -> None:
        self.version += 1
        self.text = text
        self.s.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def retype(self, line: int, old: str, new: str) -> None:
        self.version += 1
        lines = self.text.splitlines(keepends=True)
        column = lines[line].index(old)
        change_line(self.s, self.uri, self.version, line, column, old, new)
        lines[line] = lines[line].replace(old, new, 1)
        self.text = "".join(lines)


async def test_the_users_change_reaches_the_model_and_lenses_revert_the_agents_hunks(ws, fake):
    async with server(ws, fake) as (s, refreshes):
        caps = s.init_result.capabilities if s.init_result is not None else None
        assert caps is not None and caps.code_lens_provider is not None, "codeLensProvider is declared"
        fake.push(calls(tool_call("multiEdit", EDITS, "toolu_l1")), reply("Fixed area."))
        result = await s.execute("coder.input", {"text": PROMPT})
        assert result["status"] == "completed", result
        assert (ws / "shapes.py").read_text() == AFTER
        assert refreshes, "the turn changed the agent's lines: the client is asked to refresh its lenses"

        ed = Editor(s, "shapes.py", AFTER)
        ed.retype(1, "return w * h", "return w * h if w > 0 else 0")  # the user fixes the agent's line
        fake.push(calls(tool_call("read", {"path": "shapes.py"}, "toolu_l2")), reply("Noted."))
        result = await s.execute("coder.input", {"text": "go on"})
        assert result["status"] == "completed", result
        first, second = requests(fake)[-2:]
        told = last_user_text(first)
        assert NOTE in told
        assert "-    return w * h\n+    return w * h if w > 0 else 0" in told
        assert all_text(second).count(NOTE) == 1, "told once, not again at the next request"

        found = await lenses(s, ed.uri)
        assert [lens.range.start.line for lens in found] == [1, 5]
        for lens in found:
            assert lens.command is not None and lens.command.command == "coder.revertHunk"
            assert '"fix area and half in shapes…"' in lens.command.title, lens.command.title

        # the untouched hunk goes back: only it
        ok = await s.execute("coder.revertHunk", found[1].command.arguments[0])
        assert ok["status"] == "completed", ok
        assert ed.text == AFTER.replace("    # integer halves stay floats\n", "").replace(
            "return w * h", "return w * h if w > 0 else 0"
        )
        assert ok["data"]["startLine"] == 6 and ok["data"]["endLine"] == 6
        applied = [e for e in s.events_of("editApplied") if e.get("submissionId") == ok["submissionId"]]
        assert [(e["uri"], e["applied"]) for e in applied] == [(ed.uri, True)], "clients save it as any edit"

        # the hunk the user changed is refused, with the reason
        refused = await s.execute("coder.revertHunk", found[0].command.arguments[0])
        assert refused["status"] == "failed" and refused["error"]["code"] == "changed_since", refused
        assert "line 2 changed since the agent wrote it" in refused["error"]["message"]
        assert "return w * h if w > 0 else 0" in ed.text  # the user's line is kept
        assert [lens.range.start.line for lens in await lenses(s, ed.uri)] == [1]


async def test_a_revert_is_recorded_and_undone_by_undo(ws, fake):
    async with server(ws, fake) as (s, _):
        fake.push(calls(tool_call("multiEdit", EDITS, "toolu_l3")), reply("Fixed."))
        assert (await s.execute("coder.input", {"text": PROMPT}))["status"] == "completed"
        uri = (ws / "shapes.py").as_uri()
        found = await lenses(s, uri)  # not open in the editor: the lines as the agent left them
        assert [lens.range.start.line for lens in found] == [1, 5]
        ok = await s.execute("coder.revertHunk", found[0].command.arguments[0])
        assert ok["status"] == "completed", ok
        assert (ws / "shapes.py").read_text() == AFTER.replace("return w * h", "return w + h")
        undone = await s.execute("coder.undo", {})
        assert undone["status"] == "completed", undone
        assert (ws / "shapes.py").read_text() == AFTER, "/undo puts the reverted hunk back"


async def test_forged_ids_other_files_and_outside_paths_are_refused(ws, fake, tmp_path):
    async with server(ws, fake) as (s, _):
        (ws / "other.py").write_text("x = 1\n")
        fake.push(calls(tool_call("multiEdit", EDITS, "toolu_l4")), reply("Fixed."))
        assert (await s.execute("coder.input", {"text": PROMPT}))["status"] == "completed"
        [lens, _] = await lenses(s, (ws / "shapes.py").as_uri())
        arg = lens.command.arguments[0]

        link = await s.execute("coder.revertHunk", {**arg, "hunkId": "0123456789abcdef", "origin": "link"})
        assert link["error"]["code"] == "unknown_hunk", link  # VS Code's mark is taken, the id still checked
        forged = await s.execute("coder.revertHunk", {**arg, "hunkId": "0123456789abcdef"})
        assert forged["error"]["code"] == "unknown_hunk", forged
        other = await s.execute("coder.revertHunk", {**arg, "uri": (ws / "other.py").as_uri()})
        assert other["error"]["code"] == "unknown_hunk", other
        outside = tmp_path / "outside.py"
        outside.write_text(AFTER)
        away = await s.execute("coder.revertHunk", {**arg, "uri": outside.as_uri()})
        assert away["error"]["code"] == "outside_workspace", away
        assert outside.read_text() == AFTER and (ws / "shapes.py").read_text() == AFTER  # nothing written
        assert (ws / "other.py").read_text() == "x = 1\n"


async def test_a_change_to_a_file_the_agent_never_touched_tells_the_model_nothing(ws, fake):
    async with server(ws, fake) as (s, _):
        fake.push(calls(tool_call("multiEdit", EDITS, "toolu_l5")), reply("Fixed."))
        assert (await s.execute("coder.input", {"text": PROMPT}))["status"] == "completed"
        ed = Editor(s, "app.py", (ws / "app.py").read_text())
        ed.retype(1, "return a - b", "return a + b")
        other = Editor(s, "shapes.py", AFTER)
        other.retype(0, "def area(w, h):", "def area(w, h):  # a line the agent did not write")
        other.replace("import math\n\n" + other.text)  # lines added above the agent's move its lenses
        assert [lens.range.start.line for lens in await lenses(s, other.uri)] == [3, 7]
        other.replace(other.text.replace("import math\n", "", 1))  # ... and removed, back up
        assert [lens.range.start.line for lens in await lenses(s, other.uri)] == [2, 6]
        fake.push(reply("Fine."))
        assert (await s.execute("coder.input", {"text": "and now?"}))["status"] == "completed"
        assert NOTE not in all_text(requests(fake)[-1])
        assert await lenses(s, ed.uri) == []


async def test_a_subagents_lines_name_the_subagent(ws, fake):
    async with server(ws, fake) as (s, _):
        fake.push(
            calls(tool_call("task", {"agent": "general", "prompt": "rewrite shapes now"}, "toolu_t1")),
            calls(tool_call("multiEdit", EDITS, "toolu_s1")),
            reply("Subagent done."),
            reply("Delegated."),
        )
        result = await s.execute("coder.input", {"text": "delegate the shapes fix to a subagent"})
        assert result["status"] == "completed", result
        assert (ws / "shapes.py").read_text() == AFTER
        found = await lenses(s, (ws / "shapes.py").as_uri())
        assert [lens.range.start.line for lens in found] == [1, 5]
        assert all(lens.command.title.startswith('Coder (general): "delegate the shapes fix') for lens in found), [
            lens.command.title for lens in found
        ]


async def test_a_lens_reverted_after_an_edit_and_resend_goes(ws, fake):
    """The real VS Code scenario's order: a message is edited and resent (the session forks,
    the original stays loaded), then the agent edits; its lens reverts, and no lens is left."""
    async with server(ws, fake) as (s, refreshes):
        fake.push(reply("Hello."))
        first = await s.execute("coder.input", {"text": "say hello"})
        assert first["status"] == "completed", first
        fake.push(reply("Goodbye."))
        resent = await s.execute("coder.input", {"text": "say goodbye", "replaces": first["submissionId"]})
        assert resent["status"] == "completed" and resent["sessionId"] != first["sessionId"], resent
        ed = Editor(s, "shapes.py", BEFORE)
        fake.push(calls(tool_call("edit", EDITS["edits"][0] | {"path": "shapes.py"}, "toolu_f1")), reply("Fixed."))
        done = await s.execute("coder.input", {"text": "fix area in shapes.py", "sessionId": resent["sessionId"]})
        assert done["status"] == "completed", done
        (lens,) = await lenses(s, ed.uri)
        assert lens.command is not None
        asked = len(refreshes)
        ok = await s.execute("coder.revertHunk", lens.command.arguments[0])
        assert ok["status"] == "completed", ok
        assert "return w + h" in ed.text
        await s.wait_for(lambda: len(refreshes) > asked)  # the editor is told to fetch them again
        assert await lenses(s, ed.uri) == [], "the reverted hunk's lens is gone"


async def test_lenses_asked_for_while_the_revert_lands_leave_out_its_hunk(ws, fake):
    """An editor asks for the lenses again when the revert's edit changes its buffer, before it
    answers `workspace/applyEdit` (VS Code does, on the content change): the answer already
    leaves out the hunk being reverted. A client that does not get (or acts on) the refresh
    keeps that answer; VS Code cancels its refresh's update when the editor loses the focus."""
    async with server(ws, fake) as (s, _):
        ed = Editor(s, "shapes.py", BEFORE)
        fake.push(calls(tool_call("multiEdit", EDITS, "toolu_d1")), reply("Fixed."))
        assert (await s.execute("coder.input", {"text": PROMPT}))["status"] == "completed"
        found = await lenses(s, ed.uri)
        assert [lens.range.start.line for lens in found] == [1, 5]
        during: list[list[types.CodeLens]] = []

        async def answer(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            done = ed.answer(params)  # the buffer changes (didChange) ...
            during.append(await lenses(s, ed.uri))  # ... and the editor asks again at once
            return done

        s.answer_edit = answer
        ok = await s.execute("coder.revertHunk", found[1].command.arguments[0])
        assert ok["status"] == "completed", ok
        assert "# integer halves stay floats" not in ed.text
        assert [[lens.range.start.line for lens in got] for got in during] == [[1]], "the reverted hunk's lens left out"
        assert [lens.range.start.line for lens in await lenses(s, ed.uri)] == [1]
