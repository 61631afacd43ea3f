"""EditRequest (engine) -> WorkspaceEdit (LSP), shaped by what the client supports."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from coder_ls.engine.host import ClientCaps
from coder_ls.protocol.edits import FileChange, TextEdit

REVIEW_ANNOTATION = "coder.review"


def _range(e: TextEdit) -> types.Range:
    return types.Range(
        start=types.Position(line=e.start_line, character=e.start_character),
        end=types.Position(line=e.end_line, character=e.end_character),
    )


def _text_edit(e: TextEdit) -> types.TextEdit:
    return types.TextEdit(range=_range(e), new_text=e.new_text)


def _doc_edit(e: TextEdit, annotation: str | None) -> types.TextEdit | types.AnnotatedTextEdit:
    if annotation is not None:
        return types.AnnotatedTextEdit(range=_range(e), new_text=e.new_text, annotation_id=annotation)
    return _text_edit(e)


def _insert_all(text: str, annotation: str | None = None) -> types.TextEdit | types.AnnotatedTextEdit:
    return _doc_edit(TextEdit(0, 0, 0, 0, text), annotation)


def uri_of(path: str) -> str:
    return Path(path).as_uri()


def workspace_edit(
    changes: tuple[FileChange, ...], caps: ClientCaps, *, review_label: str | None = None
) -> types.WorkspaceEdit:
    """Versioned `documentChanges` when the client supports them, else `changes`.

    New files: `CreateFile` then an insert, when the client supports resource operations.
    (A client without them gets new files written by the caller, see `needs_disk_create`.)
    `review_label`: every edit carries one change annotation with `needsConfirmation`
    (the editor's own preview is the approval question; documentChanges form only).
    """
    if caps.document_changes:
        note = REVIEW_ANNOTATION if review_label is not None and caps.change_annotations else None
        doc_changes: list[types.TextDocumentEdit | types.CreateFile] = []
        for ch in changes:
            uri = uri_of(ch.path)
            if ch.kind == "create":
                doc_changes.append(
                    types.CreateFile(
                        uri=uri,
                        options=types.CreateFileOptions(overwrite=False, ignore_if_exists=True),
                        annotation_id=note,
                    )
                )
                edits = [_insert_all(ch.new_text, note)] if ch.new_text else []
                version = None
            else:
                edits = [_doc_edit(e, note) for e in ch.edits]
                version = ch.base_version
            if edits:
                doc_changes.append(
                    types.TextDocumentEdit(
                        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                        edits=list(edits),
                    )
                )
        if note is None:
            return types.WorkspaceEdit(document_changes=doc_changes)
        annotation = types.ChangeAnnotation(
            label=review_label or "Coder", needs_confirmation=True, description="Review the change Coder proposes"
        )
        return types.WorkspaceEdit(document_changes=doc_changes, change_annotations={note: annotation})
    plain: dict[str, list[types.TextEdit]] = {}
    for ch in changes:
        if ch.kind == "create":
            continue
        plain[uri_of(ch.path)] = [_text_edit(e) for e in ch.edits]
    return types.WorkspaceEdit(changes=plain)


def needs_disk_create(caps: ClientCaps) -> bool:
    """New files go to disk ourselves when the client cannot create them through an edit."""
    return not (caps.document_changes and caps.resource_create)
