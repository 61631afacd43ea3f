"""EditRequest (engine) -> WorkspaceEdit (LSP), shaped by what the client supports."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from coder_ls.engine.host import ClientCaps
from coder_ls.protocol.edits import FileChange, TextEdit


def _text_edit(e: TextEdit) -> types.TextEdit:
    return types.TextEdit(
        range=types.Range(
            start=types.Position(line=e.start_line, character=e.start_character),
            end=types.Position(line=e.end_line, character=e.end_character),
        ),
        new_text=e.new_text,
    )


def _insert_all(text: str) -> types.TextEdit:
    pos = types.Position(line=0, character=0)
    return types.TextEdit(range=types.Range(start=pos, end=pos), new_text=text)


def uri_of(path: str) -> str:
    return Path(path).as_uri()


def workspace_edit(changes: tuple[FileChange, ...], caps: ClientCaps) -> types.WorkspaceEdit:
    """Versioned `documentChanges` when the client supports them, else `changes`.

    New files: `CreateFile` then an insert, when the client supports resource operations.
    (A client without them gets new files written by the caller, see `needs_disk_create`.)
    """
    if caps.document_changes:
        doc_changes: list[types.TextDocumentEdit | types.CreateFile] = []
        for ch in changes:
            uri = uri_of(ch.path)
            if ch.kind == "create":
                doc_changes.append(
                    types.CreateFile(uri=uri, options=types.CreateFileOptions(overwrite=False, ignore_if_exists=True))
                )
                edits = [_insert_all(ch.new_text)] if ch.new_text else []
                version = None
            else:
                edits = [_text_edit(e) for e in ch.edits]
                version = ch.base_version
            if edits:
                doc_changes.append(
                    types.TextDocumentEdit(
                        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                        edits=list(edits),
                    )
                )
        return types.WorkspaceEdit(document_changes=doc_changes)
    plain: dict[str, list[types.TextEdit]] = {}
    for ch in changes:
        if ch.kind == "create":
            continue
        plain[uri_of(ch.path)] = [_text_edit(e) for e in ch.edits]
    return types.WorkspaceEdit(changes=plain)


def needs_disk_create(caps: ClientCaps) -> bool:
    """New files go to disk ourselves when the client cannot create them through an edit."""
    return not (caps.document_changes and caps.resource_create)
