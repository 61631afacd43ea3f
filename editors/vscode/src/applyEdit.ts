/**
 * Our `workspace/applyEdit` handler (it replaces the language client's): applies the
 * edit like the library does (refusing one whose document versions are stale), then,
 * with `coder.saveEditedFiles`, saves the edited documents that were open before
 * answering the server (see `documentsToSaveAfterApply` in src/saveEdits.ts).
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
import { documentsToSaveAfterApply } from './saveEdits';

export function handleApplyEdit(client: LanguageClient, log: (message: string) => void): void {
  client.onRequest(ApplyWorkspaceEditRequest.type, (params) => applyAndSave(client, params, log));
}

async function applyAndSave(
  client: LanguageClient,
  params: ApplyWorkspaceEditParams,
  log: (message: string) => void,
): Promise<ApplyWorkspaceEditResult> {
  const open = new Map(vscode.workspace.textDocuments.map((d) => [d.uri.toString(), d] as const));
  for (const change of params.edit.documentChanges ?? []) {
    if (!TextDocumentEdit.is(change) || typeof change.textDocument.version !== 'number' || change.textDocument.version < 0) continue;
    const doc = open.get(client.protocol2CodeConverter.asUri(change.textDocument.uri).toString());
    if (doc && doc.version !== change.textDocument.version) return { applied: false, failureReason: 'the document changed' };
  }
  const edit = await client.protocol2CodeConverter.asWorkspaceEdit(params.edit);
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
