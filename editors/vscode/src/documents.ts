/** VS Code glue of src/saveEdits.ts: saves the open document the agent just edited. */
import * as vscode from 'vscode';
import { appliedEditUri, saveAfterEdit } from './saveEdits';
import { coderConfig } from './settings';

/** `coder.saveEditedFiles` (client-only, never sent to the server); default true. */
export function saveEditedFilesEnabled(): boolean {
  return coderConfig().get<boolean>('saveEditedFiles') !== false;
}

/** For every `coder/event`: saves the document of an applied `editApplied` when it is dirty. */
export async function saveEditedFile(event: unknown, log?: (message: string) => void): Promise<boolean> {
  if (appliedEditUri(event) === undefined) return false; // most events: no settings lookup
  return saveAfterEdit(event, {
    enabled: saveEditedFilesEnabled(),
    documents: vscode.workspace.textDocuments,
    normalize: (uri) => vscode.Uri.parse(uri).toString(),
    log,
  });
}
