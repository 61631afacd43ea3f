/**
 * Saving a buffer after the agent's edit to it was applied. `workspace/applyEdit`
 * changes an open document in the editor (undo stack) but not the file on disk,
 * so the agent's shell commands and auto-verify would see the old file; with
 * `coder.saveEditedFiles` (default on) the edited document is saved.
 * Pure: no `vscode` import (the glue is `saveEditedFile` in src/documents.ts).
 */

/** The part of `vscode.TextDocument` this module needs. */
export interface SaveableDocument {
  readonly uri: { toString(): string };
  readonly isDirty: boolean;
  /** Saving an untitled document would open a Save As dialog: never done. */
  readonly isUntitled?: boolean;
  save(): PromiseLike<boolean>;
}

export interface SaveEnv<D extends SaveableDocument = SaveableDocument> {
  /** `coder.saveEditedFiles`. */
  enabled: boolean;
  /** The open documents (`vscode.workspace.textDocuments`). */
  documents: readonly D[];
  /** A wire URI in the editor's own spelling (`vscode.Uri.parse(uri).toString()`). */
  normalize(uri: string): string;
  /** Told when a save fails. */
  log?(message: string): void;
}

/** The URI of an `editApplied` event with `applied: true`, else undefined. */
export function appliedEditUri(event: unknown): string | undefined {
  if (typeof event !== 'object' || event === null) return undefined;
  const ev = event as { type?: unknown; uri?: unknown; applied?: unknown };
  if (ev.type !== 'editApplied' || ev.applied !== true || typeof ev.uri !== 'string' || !ev.uri) return undefined;
  return ev.uri;
}

/**
 * True when the server wrote the file itself (`onDisk: true`): the disk already holds
 * the edit, and saving the copy the editor loaded would race the server's own write.
 */
export function editIsOnDisk(event: unknown): boolean {
  return typeof event === 'object' && event !== null && (event as { onDisk?: unknown }).onDisk === true;
}

/**
 * The document an `editApplied {applied: true}` event asks to save: open, dirty,
 * not untitled, and only when the setting is on and the server did not write the
 * file itself (`onDisk: true`); else undefined.
 */
export function documentToSave<D extends SaveableDocument>(event: unknown, env: SaveEnv<D>): D | undefined {
  const uri = appliedEditUri(event);
  if (!env.enabled || uri === undefined || editIsOnDisk(event)) return undefined;
  let target: string;
  try {
    target = env.normalize(uri);
  } catch {
    return undefined;
  }
  return env.documents.find((d) => d.isDirty && !d.isUntitled && d.uri.toString() === target);
}

/**
 * Saves the document `event` is about when it should be (see `documentToSave`).
 * Resolves to true when a save happened and succeeded; never rejects.
 */
export async function saveAfterEdit(event: unknown, env: SaveEnv): Promise<boolean> {
  const doc = documentToSave(event, env);
  if (!doc) return false;
  let saved = false;
  let why = 'save() returned false';
  try {
    saved = await doc.save();
  } catch (err) {
    why = err instanceof Error ? err.message : String(err);
  }
  if (!saved) env.log?.(`coder.saveEditedFiles: could not save ${doc.uri.toString()}: ${why}`);
  return saved;
}

/**
 * The documents to save right after a `workspace/applyEdit` was applied, BEFORE it
 * is answered: the server takes its /undo snapshot when the turn ends, and a save
 * that lands after that (the `editApplied` event comes later) left /undo with
 * "Nothing to undo" and the agent's next shell command with the old file. Only the
 * edited documents that were open before the edit: a file that was not open is
 * written by the server itself (`onDisk`), and saving VS Code's copy would race it.
 */
export function documentsToSaveAfterApply<D extends SaveableDocument>(
  editedUris: readonly string[],
  openBefore: ReadonlySet<string>,
  env: Pick<SaveEnv<D>, 'enabled' | 'documents'>,
): D[] {
  if (!env.enabled) return [];
  const wanted = new Set(editedUris.filter((u) => openBefore.has(u)));
  return env.documents.filter((d) => d.isDirty && !d.isUntitled && wanted.has(d.uri.toString()));
}

/**
 * The document an `editApplied {applied: true, onDisk: true}` event leaves dirty: VS Code
 * loaded the file (and opened it in an editor) to apply the edit, while the server wrote
 * the same text to disk. It is reverted (re-read from disk, where the edit is) rather than
 * saved, once its text is what the disk holds; else undefined.
 */
export function documentToRevert<D extends SaveableDocument>(event: unknown, env: Pick<SaveEnv<D>, 'documents' | 'normalize'>): D | undefined {
  const uri = appliedEditUri(event);
  if (uri === undefined || !editIsOnDisk(event)) return undefined;
  let target: string;
  try {
    target = env.normalize(uri);
  } catch {
    return undefined;
  }
  return env.documents.find((d) => d.isDirty && !d.isUntitled && d.uri.toString() === target);
}
