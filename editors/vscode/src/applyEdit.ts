/**
 * Our `workspace/applyEdit` handler (it replaces the language client's): applies the
 * edit like the library does (refusing one whose document versions are stale), then,
 * with `coder.saveEditedFiles`, saves the edited documents that were open before
 * answering the server (see `documentsToSaveAfterApply` in src/saveEdits.ts).
 * An edit sent as a question (contract section 15) is first reviewed, change by change,
 * in the extension's diff (src/review.ts); only the accepted changes are applied.
 * Either way the diff of each file (src/editDiff.ts), with what became of each change, goes
 * to `onDiff` before the server hears the answer: the chat shows it with the edit.
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
import { diffOfChanges, type EditDiff } from './editDiff';
import { type EditReviews, wantsOwnReview } from './review';
import type { FileReview, Pos } from './reviewModel';
import { documentsToSaveAfterApply } from './saveEdits';

/** Receives the diff of a file an edit changed (or would have): its URI as the server sent it. */
export type DiffSink = (uri: string, diff: EditDiff) => void;

export function handleApplyEdit(client: LanguageClient, log: (message: string) => void, reviews?: EditReviews, onDiff?: DiffSink): void {
  client.onRequest(ApplyWorkspaceEditRequest.type, async (params, token) => {
    const out = await applyAndSave(client, params, log, reviews, token);
    for (const f of out.files) onDiff?.(f.uri, diffOfChanges(f.original, f.hunks.map((h) => ({ ...h, accepted: out.result.applied && h.accepted })), out.reviewed));
    return out.result;
  });
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
): Promise<{ result: ApplyWorkspaceEditResult; files: FileReview[]; reviewed: boolean }> {
  const open = new Map(vscode.workspace.textDocuments.map((d) => [d.uri.toString(), d] as const));
  if (staleDocument(client, params)) return { result: { applied: false, failureReason: 'the document changed' }, files: [], reviewed: false };
  const files = await reviewFiles(client, params, open).catch(() => [] as FileReview[]);
  const reviewed = !!reviews && wantsOwnReview(params, vscode.workspace.getConfiguration('coder').get<string>('reviewEdits'));
  const answer = (result: ApplyWorkspaceEditResult, decided = reviewed) => ({ result, files, reviewed: decided });
  let edit: vscode.WorkspaceEdit;
  if (reviews && reviewed) {
    const label = Object.values(params.edit.changeAnnotations ?? {})[0]?.label || params.label || 'Coder wants to edit';
    const kept = await reviews.review(files, label, withdrawn);
    if (withdrawn.isCancellationRequested) return answer({ applied: false, failureReason: 'withdrawn by the server' }, false);
    if (!kept) {
      for (const f of files) for (const h of f.hunks) h.accepted = false; // "Reject all" keeps no tick
      return answer({ applied: false, failureReason: 'the user rejected every change in the review' });
    }
    if (staleDocument(client, params)) return answer({ applied: false, failureReason: 'the document changed during the review' }, false);
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
  if (!applied) return answer({ applied });
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
  return answer({ applied });
}

/** The files of an edit as the review shows them: the text now (the open buffer, else the
 * disk, else empty) and each text edit as a change, accepted until the user rejects it.
 * (Plain `changes` too: an edit that is no question still has its diff shown.) */
async function reviewFiles(
  client: LanguageClient,
  params: ApplyWorkspaceEditParams,
  open: ReadonlyMap<string, vscode.TextDocument>,
): Promise<FileReview[]> {
  const files: FileReview[] = [];
  const textOf = async (raw: string): Promise<string> => {
    const uri = client.protocol2CodeConverter.asUri(raw);
    const text = open.get(uri.toString())?.getText();
    if (text !== undefined) return text;
    return vscode.workspace.fs.readFile(uri).then(
      (bytes) => new TextDecoder().decode(bytes),
      () => '',
    );
  };
  const add = async (raw: string, edits: readonly { range: { start: Pos; end: Pos }; newText: string }[]): Promise<void> => {
    const hunks = edits.map((e) => ({ start: e.range.start, end: e.range.end, newText: e.newText, accepted: true }));
    files.push({ uri: raw, original: await textOf(raw), hunks });
  };
  for (const change of params.edit.documentChanges ?? []) {
    if (TextDocumentEdit.is(change)) await add(change.textDocument.uri, change.edits);
  }
  for (const [raw, edits] of Object.entries(params.edit.changes ?? {})) await add(raw, edits);
  return files;
}
