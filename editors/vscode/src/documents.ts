/** VS Code glue of src/saveEdits.ts: saves the open document the agent just edited. */
import * as vscode from 'vscode';
import { appliedEditUri, documentToRevert, saveAfterEdit } from './saveEdits';
import { coderConfig } from './settings';

/** `coder.saveEditedFiles` (client-only, never sent to the server); default true. */
export function saveEditedFilesEnabled(): boolean {
  return coderConfig().get<boolean>('saveEditedFiles') !== false;
}

/** For every `coder/event`: saves the document of an applied `editApplied` when it is dirty. */
export async function saveEditedFile(event: unknown, log?: (message: string) => void): Promise<boolean> {
  if (appliedEditUri(event) === undefined) return false; // most events: no settings lookup
  const stale = documentToRevert(event, {
    documents: vscode.workspace.textDocuments,
    normalize: (uri) => vscode.Uri.parse(uri).toString(),
  });
  if (stale) {
    await revertToDisk(stale, log);
    return false;
  }
  return saveAfterEdit(event, {
    enabled: saveEditedFilesEnabled(),
    documents: vscode.workspace.textDocuments,
    normalize: (uri) => vscode.Uri.parse(uri).toString(),
    log,
  });
}

/**
 * Re-reads `doc` from disk when its text is what the disk holds (the server wrote the
 * file itself: `onDisk`), so VS Code does not keep a dirty copy that a later save would
 * report as "newer on disk". The API has no per-document revert: the document is made
 * the active editor (focus kept where it is) and `workbench.action.files.revert` runs.
 */
async function revertToDisk(doc: vscode.TextDocument, log?: (message: string) => void): Promise<void> {
  try {
    const onDisk = new TextDecoder().decode(await vscode.workspace.fs.readFile(doc.uri));
    if (onDisk !== doc.getText()) return; // something else changed it: leave it to the user
    await vscode.window.showTextDocument(doc, { preserveFocus: true, preview: true });
    await vscode.commands.executeCommand('workbench.action.files.revert');
  } catch (err) {
    log?.(`coder: could not re-read ${doc.uri.toString()}: ${err instanceof Error ? err.message : String(err)}`);
  }
}
