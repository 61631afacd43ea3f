/**
 * `/diff turn [N]` (contract section 19): what one submission changed, opened in VS Code's
 * diff editor. The server sends each text file whole before and after (`data.changes`); this
 * serves them as read-only documents of the `coder-turn:` scheme and opens `vscode.diff` for
 * one file, `vscode.changes` (the multi-file diff editor) for several.
 */
import * as vscode from 'vscode';
import type { CommandResult } from './protocol';

export const SCHEME = 'coder-turn';

export interface FileChange {
  path: string;
  before: string | null;
  after: string | null;
}

interface TurnDiff {
  submission: number;
  changes: FileChange[];
}

/** The `/diff turn` payload of a result, or null (the workspace `/diff` is not one). */
export function turnDiffOf(result: CommandResult): TurnDiff | null {
  const d = result.data as { kind?: string; submission?: unknown; changes?: unknown } | null | undefined;
  if (!d || d.kind !== 'diff' || typeof d.submission !== 'number' || !Array.isArray(d.changes)) return null;
  return { submission: d.submission, changes: d.changes as FileChange[] };
}

export class TurnDiffs implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();

  register(): vscode.Disposable {
    return vscode.workspace.registerTextDocumentContentProvider(SCHEME, this);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  private uri(submission: number, side: 'before' | 'after', path: string, text: string | null): vscode.Uri {
    const uri = vscode.Uri.parse(`${SCHEME}:/${submission}/${side}/${path}`);
    this.texts.set(uri.toString(), text ?? '');
    return uri;
  }

  /** Opens the diff editor for a `/diff turn` result; false when `result` is not one or changed no text file. */
  async show(result: CommandResult): Promise<boolean> {
    const diff = turnDiffOf(result);
    if (!diff || diff.changes.length === 0) return false;
    const pairs = diff.changes.map((c) => ({
      path: c.path,
      left: this.uri(diff.submission, 'before', c.path, c.before),
      right: this.uri(diff.submission, 'after', c.path, c.after),
    }));
    const title = `Coder: submission ${diff.submission}`;
    if (pairs.length === 1) {
      const [p] = pairs;
      await vscode.commands.executeCommand('vscode.diff', p.left, p.right, `${title}: ${p.path}`);
    } else {
      const list = pairs.map((p) => [p.right, p.left, p.right]);
      await vscode.commands.executeCommand('vscode.changes', title, list);
    }
    return true;
  }
}
