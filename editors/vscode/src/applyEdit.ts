/**
 * Our `workspace/applyEdit` handler (it replaces the language client's): applies the
 * edit like the library does (refusing one whose document versions are stale), then,
 * with `coder.saveEditedFiles`, saves the edited documents that were open before
 * answering the server (see `documentsToSaveAfterApply` in src/saveEdits.ts).
 * An edit sent as a question (contract section 15) is first reviewed, change by change,
 * in the extension's diff (src/review.ts); only the accepted changes are applied.
 */
import * as vscode from 'vscode';
import {
  type ApplyWorkspaceEditParams,
  ApplyWorkspaceEditRequest,
  type ApplyWorkspaceEditResult,
  type LanguageClient,
  TextDocumentEdit,
} from 'vscode-languageclient/node';
import { saveEditedFilesEnabled } from './documents';
import { type EditReviews, wantsOwnReview } from './review';
import type { FileReview } from './reviewModel';
import { documentsToSaveAfterApply } from './saveEdits';

export function handleApplyEdit(client: LanguageClient, log: (message: string) => void, reviews?: EditReviews): void {
  client.onRequest(ApplyWorkspaceEditRequest.type, (params, token) => applyAndSave(client, params, log, reviews, token));
}

function staleDocument(client: LanguageClient, params: ApplyWorkspaceEditParams): boolean {
  const open = new Map(vscode.workspace.textDocuments.map((d) => [d.uri.toString(), d] as const));
  for (const change of params.edit.documentChanges ?? []) {
    if (!TextDocumentEdit.is(change) || typeof change.textDocument.version !== 'number' || change.textDocument.version < 0) continue;
    const doc = open.get(client.protocol2CodeConverter.asUri(change.textDocument.uri).toString());
    if (doc && doc.version !== change.textDocument.version) return true;
  }
  return false;
}

async function applyAndSave(
  client: LanguageClient,
  params: ApplyWorkspaceEditParams,
  log: (message: string) => void,
  reviews: EditReviews | undefined,
  withdrawn: vscode.CancellationToken,
): Promise<ApplyWorkspaceEditResult> {
  const open = new Map(vscode.workspace.textDocuments.map((d) => [d.uri.toString(), d] as const));
  if (staleDocument(client, params)) return { applied: false, failureReason: 'the document changed' };
  let edit: vscode.WorkspaceEdit;
  if (reviews && wantsOwnReview(params, vscode.workspace.getConfiguration('coder').get<string>('reviewEdits'))) {
    const files = await reviewFiles(client, params, open);
    const label = Object.values(params.edit.changeAnnotations ?? {})[0]?.label || params.label || 'Coder wants to edit';
    const kept = await reviews.review(files, label, withdrawn);
    if (withdrawn.isCancellationRequested) return { applied: false, failureReason: 'withdrawn by the server' };
    if (!kept) return { applied: false, failureReason: 'the user rejected every change in the review' };
    if (staleDocument(client, params)) return { applied: false, failureReason: 'the document changed during the review' };
    edit = new vscode.WorkspaceEdit();
    for (const f of kept) {
      const uri = client.protocol2CodeConverter.asUri(f.uri);
      for (const h of f.hunks) {
        if (h.accepted) edit.replace(uri, new vscode.Range(h.start.line, h.start.character, h.end.line, h.end.character), h.newText);
      }
    }
  } else {
    edit = await client.protocol2CodeConverter.asWorkspaceEdit(params.edit);
  }
  const applied = await vscode.workspace.applyEdit(edit);
  if (!applied) return { applied };
  const edited = edit.entries().map(([uri]) => uri.toString());
  const toSave = documentsToSaveAfterApply(edited, new Set(open.keys()), {
    enabled: saveEditedFilesEnabled(),
    documents: vscode.workspace.textDocuments,
  });
  for (const doc of toSave) {
    const saved = await doc.save().then(
      (ok) => ok,
      () => false,
    );
    if (!saved) log(`coder.saveEditedFiles: could not save ${doc.uri.toString()}`);
  }
  return { applied };
}

/** The files of an edit as the review shows them: the text now (the open buffer, else the
 * disk, else empty) and each text edit as a change, accepted until the user rejects it. */
async function reviewFiles(
  client: LanguageClient,
  params: ApplyWorkspaceEditParams,
  open: ReadonlyMap<string, vscode.TextDocument>,
): Promise<FileReview[]> {
  const files: FileReview[] = [];
  for (const change of params.edit.documentChanges ?? []) {
    if (!TextDocumentEdit.is(change)) continue;
    const uri = client.protocol2CodeConverter.asUri(change.textDocument.uri);
    let original = open.get(uri.toString())?.getText();
    if (original === undefined) {
      original = await vscode.workspace.fs.readFile(uri).then(
        (bytes) => new TextDecoder().decode(bytes),
        () => '',
      );
    }
    const hunks = change.edits.map((e) => ({ start: e.range.start, end: e.range.end, newText: e.newText, accepted: true }));
    files.push({ uri: change.textDocument.uri, original, hunks });
  }
  return files;
}
