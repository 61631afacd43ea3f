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
 * The document an `editApplied {applied: true}` event asks to save: open, dirty,
 * not untitled, and only when the setting is on; else undefined.
 */
export function documentToSave<D extends SaveableDocument>(event: unknown, env: SaveEnv<D>): D | undefined {
  const uri = appliedEditUri(event);
  if (!env.enabled || uri === undefined) return undefined;
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
