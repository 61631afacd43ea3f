/**
 * The extension's own review of an agent edit (contract section 15): an edit the server
 * sends as a question (a change annotation with `needsConfirmation`) opens a diff of
 * each file, what is there against what Coder proposes, and a list of the changes, each
 * with a tick: untick one to reject it (the diff's right side drops it at once), Enter
 * applies the ticked ones. Apply / Reject all are also in the diff's title bar (and, with
 * `diffEditor.codeLens` on, an Accept / Reject lens sits on every change), and in the chat
 * (a line above the input while the review waits: no notification of its own, the chat
 * or the run's one notification says that Coder waits). Nothing lands until Apply; then
 * only the accepted changes are applied, and the server reads which ones were kept.
 * `coder.reviewEdits: "refactorPreview"` leaves the question to VS Code's Refactor Preview.
 */
import * as vscode from 'vscode';
import type { ApplyWorkspaceEditParams } from 'vscode-languageclient/node';
import { decisionSummary, type FileReview, hunkLines, hunkSummary, textWith } from './reviewModel';
import { plain } from './plainText';

export const REVIEW_SCHEME = 'coder-review';

interface Review {
  id: string;
  label: string;
  files: FileReview[];
  decide(apply: boolean): void;
  /** The open list of changes, kept in step with the lenses. */
  list?: vscode.QuickPick<ChangeItem>;
}

interface ChangeItem extends vscode.QuickPickItem {
  file: number;
  hunk: number;
}

type Side = 'original' | 'proposed';

/** Is this edit a question the extension reviews itself? Only plain text edits are: one
 * that creates, renames or deletes files goes to the Refactor Preview. */
export function wantsOwnReview(params: ApplyWorkspaceEditParams, setting: string | undefined): boolean {
  if (setting === 'refactorPreview') return false;
  const notes = Object.values(params.edit.changeAnnotations ?? {});
  if (!notes.some((n) => n.needsConfirmation)) return false;
  const changes = params.edit.documentChanges;
  if (!changes?.length) return false;
  return changes.every((c) => 'textDocument' in c && 'edits' in c);
}

export class EditReviews implements vscode.TextDocumentContentProvider, vscode.CodeLensProvider {
  private readonly reviews = new Map<string, Review>();
  private readonly contentChanged = new vscode.EventEmitter<vscode.Uri>();
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  private readonly pendingChanged = new vscode.EventEmitter<void>();
  readonly onDidChange = this.contentChanged.event;
  readonly onDidChangeCodeLenses = this.lensesChanged.event;
  /** A review began, ended, or its ticks changed (the chat's line follows). */
  readonly onDidChangePending = this.pendingChanged.event;
  private next = 1;

  register(): vscode.Disposable[] {
    return [
      vscode.workspace.registerTextDocumentContentProvider(REVIEW_SCHEME, this),
      vscode.languages.registerCodeLensProvider({ scheme: REVIEW_SCHEME }, this),
      vscode.commands.registerCommand('coderLs.review.toggle', (id: string, file: number, hunk: number) => this.toggle(id, file, hunk)),
      vscode.commands.registerCommand('coderLs.review.apply', (uri?: vscode.Uri) => this.finish(uri, true)),
      vscode.commands.registerCommand('coderLs.review.reject', (uri?: vscode.Uri) => this.finish(uri, false)),
      vscode.commands.registerCommand('coderLs.review.choose', (uri?: vscode.Uri) => {
        const review = this.shown(uri);
        if (review) this.showList(review);
      }),
      this.contentChanged,
      this.lensesChanged,
      this.pendingChanged,
    ];
  }

  /** The reviews waiting for the user, oldest first. */
  pending(): Array<{ id: string; label: string; files: FileReview[] }> {
    return [...this.reviews.values()].map(({ id, label, files }) => ({ id, label, files }));
  }

  /**
   * The chat's buttons for review `id`: show its diff and list again, apply the ticked
   * changes, or reject it all. The chat names the review it shows (a webview message: no
   * `command:` link reaches this), so it needs no editor to be active.
   */
  async act(id: string, action: 'show' | 'apply' | 'reject'): Promise<void> {
    const review = this.reviews.get(id);
    if (!review) return;
    if (action === 'apply') review.decide(true);
    else if (action === 'reject') review.decide(false);
    else {
      await this.openDiffs(review);
      this.showList(review);
    }
  }

  private async openDiffs(review: Review): Promise<void> {
    for (let i = 0; i < review.files.length; i++) {
      const name = basename(review.files[i].uri);
      const n = review.files[i].hunks.length;
      await vscode.commands.executeCommand(
        'vscode.diff',
        this.uri(review.id, i, 'original', name),
        this.uri(review.id, i, 'proposed', name),
        `${name}: ${review.label} (${n} change${n === 1 ? '' : 's'}) — review`,
        { preview: false },
      );
    }
  }

  /**
   * Shows the review and waits for the user: the files with the changes they accepted
   * (none accepted: null, the edit is rejected).
   */
  async review(files: FileReview[], label: string, withdrawn?: vscode.CancellationToken): Promise<FileReview[] | null> {
    const id = String(this.next++);
    let decide: (apply: boolean) => void = () => undefined;
    const decided = new Promise<boolean>((resolve) => (decide = resolve));
    const review: Review = { id, label, files, decide };
    this.reviews.set(id, review);
    this.pendingChanged.fire();
    // the server gave up on the question (the turn was stopped, or it timed out): close it
    const gone = withdrawn?.onCancellationRequested(() => {
      decide(false);
      void vscode.window.showInformationMessage(plain(`${label}: withdrawn by Coder (the turn stopped or the review timed out); nothing was applied.`));
    });
    try {
      await this.openDiffs(review);
      this.showList(review);
      const apply = await decided;
      return apply && decisionSummary(files).accepted > 0 ? files : null;
    } finally {
      gone?.dispose();
      this.reviews.delete(id);
      this.pendingChanged.fire();
      review.list?.dispose();
      await this.closeTabs(id);
    }
  }

  /** The list of changes: a tick each (ticked: accepted), Enter applies. Closing it decides
   * nothing (Apply / Reject all stay in the title bar; `Choose Changes` opens it again). */
  private showList(review: Review): void {
    review.list?.dispose();
    const list = vscode.window.createQuickPick<ChangeItem>();
    review.list = list;
    list.title = `${review.label}: tick the changes to apply`;
    list.placeholder = 'Untick a change to reject it · Enter applies the ticked ones · Esc hides this list';
    list.canSelectMany = true;
    list.ignoreFocusOut = true;
    list.matchOnDescription = true;
    list.matchOnDetail = true;
    const items: ChangeItem[] = [];
    review.files.forEach((f, fi) => {
      // each change as proposed: the first line of the proposed text it touches
      const proposed = { ...f, hunks: f.hunks.map((h) => ({ ...h, accepted: true })) };
      const lines = hunkLines(proposed);
      const text = textWith(proposed).split('\n');
      f.hunks.forEach((h, hi) => {
        const span = text.slice(lines[hi], lines[hi] + h.newText.split('\n').length);
        const first = h.newText ? (span.find((l) => l.trim()) ?? '').trim() || '(blank lines)' : '(removes text)';
        items.push({
          label: `${basename(f.uri)}:${lines[hi] + 1}`,
          description: hunkSummary(f, hi),
          detail: first.length > 120 ? `${first.slice(0, 119)}…` : first,
          file: fi,
          hunk: hi,
        });
      });
    });
    list.items = items;
    list.selectedItems = items.filter((i) => review.files[i.file].hunks[i.hunk].accepted);
    list.onDidChangeSelection((picked) => {
      const keep = new Set(picked.map((i) => `${i.file}:${i.hunk}`));
      review.files.forEach((f, fi) =>
        f.hunks.forEach((h, hi) => {
          const accepted = keep.has(`${fi}:${hi}`);
          if (h.accepted !== accepted) {
            h.accepted = accepted;
            this.refresh(review, fi);
          }
        }),
      );
    });
    list.onDidAccept(() => review.decide(true));
    list.onDidHide(() => {
      if (review.list === list) review.list = undefined;
      list.dispose();
    });
    list.show();
  }

  private refresh(review: Review, file: number): void {
    this.contentChanged.fire(this.uri(review.id, file, 'proposed', basename(review.files[file].uri)));
    this.lensesChanged.fire();
    this.pendingChanged.fire();
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const found = this.parse(uri);
    if (!found) return '';
    const { file, side } = found;
    return side === 'original' ? file.original : textWith(file);
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const found = this.parse(document.uri);
    if (!found || found.side !== 'proposed') return [];
    const { review, file, index } = found;
    const { accepted, total } = decisionSummary(review.files);
    const top = new vscode.Range(0, 0, 0, 0);
    const lenses = [
      new vscode.CodeLens(top, { title: `$(check-all) Apply ${accepted} of ${total} change${total === 1 ? '' : 's'}`, command: 'coderLs.review.apply', arguments: [document.uri] }),
      new vscode.CodeLens(top, { title: '$(close-all) Reject all', command: 'coderLs.review.reject', arguments: [document.uri] }),
    ];
    const lines = hunkLines(file);
    file.hunks.forEach((h, i) => {
      const at = new vscode.Range(lines[i], 0, lines[i], 0);
      const what = hunkSummary(file, i);
      lenses.push(
        new vscode.CodeLens(at, {
          title: h.accepted ? `$(check) Accepted (${what}) · Reject` : `$(circle-slash) Rejected (${what}) · Accept`,
          command: 'coderLs.review.toggle',
          arguments: [review.id, index, i],
        }),
      );
    });
    return lenses;
  }

  private toggle(id: string, file: number, hunk: number): void {
    const review = this.shown();
    if (review?.id !== id) return; // a lens acts on the review it is shown in
    const h = review?.files[file]?.hunks[hunk];
    if (!review || !h) return;
    h.accepted = !h.accepted;
    this.refresh(review, file);
    const list = review.list;
    if (list) list.selectedItems = list.items.filter((i) => review.files[i.file].hunks[i.hunk].accepted);
  }

  /**
   * The review shown in the active editor: the palette entries (enabled only there), the
   * editor title's buttons and the code lenses all act on it. Never the newest review when
   * another editor is active: a `command:coderLs.review.apply` link Ctrl+clicked in a
   * README (or any `command:` URI) must not answer a review the user has not looked at,
   * and an argument naming another review than the one shown is ignored (review ids are
   * small numbers a link could guess).
   */
  private shown(uri?: unknown): Review | undefined {
    const active = vscode.window.activeTextEditor?.document.uri;
    const review = active ? this.parse(active)?.review : undefined;
    if (!review || uri === undefined) return review;
    const named = typeof (uri as vscode.Uri | null)?.path === 'string' ? this.parse(uri as vscode.Uri)?.review : undefined;
    return named === review ? review : undefined;
  }

  private finish(uri: unknown, apply: boolean): void {
    this.shown(uri)?.decide(apply);
  }

  private uri(id: string, file: number, side: Side, name: string): vscode.Uri {
    return vscode.Uri.parse(`${REVIEW_SCHEME}:/${id}/${file}/${side}/${encodeURIComponent(name)}`);
  }

  private parse(uri: vscode.Uri): { review: Review; file: FileReview; index: number; side: Side } | undefined {
    const [, id, file, side] = uri.path.split('/');
    const review = this.reviews.get(id);
    const index = Number(file);
    const f = review?.files[index];
    if (!review || !f || (side !== 'original' && side !== 'proposed')) return undefined;
    return { review, file: f, index, side };
  }

  private async closeTabs(id: string): Promise<void> {
    const tabs = vscode.window.tabGroups?.all.flatMap((g) => g.tabs) ?? [];
    const ours = tabs.filter((t) => {
      const input = t.input as { modified?: vscode.Uri } | undefined;
      return input?.modified?.scheme === REVIEW_SCHEME && input.modified.path.split('/')[1] === id;
    });
    if (ours.length) await vscode.window.tabGroups.close(ours).then(undefined, () => undefined);
  }
}

function basename(uri: string): string {
  const path = uri.replace(/[?#].*$/, '');
  try {
    return decodeURIComponent(path.slice(path.lastIndexOf('/') + 1)) || path;
  } catch {
    return path.slice(path.lastIndexOf('/') + 1) || path;
  }
}
