import { calls, commandHandlers, progresses, quickPicks, reset, vscode } from '../helpers/vscodeMock';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EditReviews, wantsOwnReview } from '../../src/review';
import { decisionSummary, type FileReview, hunkLines, hunkSummary, offsetAt, textWith } from '../../src/reviewModel';

const ORIGINAL = 'def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n';

function file(): FileReview {
  return {
    uri: 'file:///ws/app.py',
    original: ORIGINAL,
    hunks: [
      { start: { line: 1, character: 11 }, end: { line: 1, character: 16 }, newText: 'a + b', accepted: true },
      { start: { line: 4, character: 0 }, end: { line: 4, character: 0 }, newText: '# multiply\n# two numbers\n', accepted: true },
      { start: { line: 5, character: 11 }, end: { line: 5, character: 16 }, newText: 'a * b', accepted: true },
    ],
  };
}

/** The active editor shows `uri` (undefined: none). */
function activeEditor(uri: unknown): void {
  (vscode.window as { activeTextEditor: unknown }).activeTextEditor = uri === undefined ? undefined : { document: { uri } };
}

/** The right side of the newest review's diff. */
function newestRight(): unknown {
  return calls.filter((c) => c.fn === 'executeCommand' && c.args[0] === 'vscode.diff').pop()?.args[2];
}

/** A fresh EditReviews, registered on a reset mock. */
function freshReviews(): EditReviews {
  reset();
  activeEditor(undefined);
  const reviews = new EditReviews();
  reviews.register();
  return reviews;
}

/** Starts a review and lets it open its diff and list; the promise of its answer. */
async function opened(
  reviews: EditReviews,
  files: FileReview[],
  label = 'Coder wants to edit app.py',
  token?: unknown,
): Promise<{ answer: Promise<FileReview[] | null> }> {
  const answer = reviews.review(files, label, token as never);
  await new Promise((r) => setTimeout(r, 10));
  return { answer };
}

test('the proposed text holds exactly the accepted changes', () => {
  const f = file();
  assert.equal(textWith(f), 'def add(a, b):\n    return a + b\n\n\n# multiply\n# two numbers\ndef mul(a, b):\n    return a * b\n');
  f.hunks[0].accepted = false;
  f.hunks[2].accepted = false;
  assert.equal(textWith(f), 'def add(a, b):\n    return a - b\n\n\n# multiply\n# two numbers\ndef mul(a, b):\n    return a + b\n');
  for (const h of f.hunks) h.accepted = false;
  assert.equal(textWith(f), ORIGINAL);
  assert.deepEqual(decisionSummary([f]), { accepted: 0, total: 3 });
});

test("each change's lens sits on its first line of the shown text, as changes are toggled", () => {
  const f = file();
  assert.deepEqual(hunkLines(f), [1, 4, 7], 'two inserted lines push the last change down');
  f.hunks[1].accepted = false;
  assert.deepEqual(hunkLines(f), [1, 4, 5]);
  assert.deepEqual([hunkSummary(f, 0), hunkSummary(f, 1)], ['+1 −1 lines', '+2 −0 lines']);
});

test('positions past a line end or the text end are clamped (LSP allows them)', () => {
  assert.equal(offsetAt('ab\ncd', { line: 0, character: 99 }), 2);
  assert.equal(offsetAt('ab\ncd', { line: 9, character: 0 }), 5);
});

test('only a question made of text edits is reviewed here; the setting can hand it to the Refactor Preview', () => {
  const textEdit = { textDocument: { uri: 'file:///ws/app.py', version: 1 }, edits: [] };
  const ask = { c: { label: 'Coder wants to edit app.py', needsConfirmation: true } };
  assert.ok(wantsOwnReview({ edit: { documentChanges: [textEdit], changeAnnotations: ask } }, undefined));
  assert.ok(wantsOwnReview({ edit: { documentChanges: [textEdit], changeAnnotations: ask } }, 'diff'));
  assert.ok(!wantsOwnReview({ edit: { documentChanges: [textEdit], changeAnnotations: ask } }, 'refactorPreview'));
  assert.ok(!wantsOwnReview({ edit: { documentChanges: [textEdit] } }, 'diff'), 'not a question');
  const create = { kind: 'create' as const, uri: 'file:///ws/new.py' };
  assert.ok(!wantsOwnReview({ edit: { documentChanges: [create, textEdit], changeAnnotations: ask } }, 'diff'));
});

test('the review: a diff per file, a lens per change; Reject one, Apply → only the others are kept', async () => {
  const reviews = freshReviews();
  const pending = (await opened(reviews, [file()])).answer;
  const diff = calls.find((c) => c.fn === 'executeCommand' && c.args[0] === 'vscode.diff');
  assert.ok(diff, 'a diff editor was opened');
  const [, left, right, title] = diff.args as [string, { path: string }, { path: string; toString(): string }, string];
  assert.match(left.path, /\/original\/app\.py$/);
  assert.match(title, /app\.py: Coder wants to edit app\.py \(3 changes\)/);
  assert.equal(reviews.provideTextDocumentContent(left as never), ORIGINAL);
  activeEditor(right); // the user looks at the diff
  const doc = { uri: right } as never;
  const lenses = (): Array<{ range: { startLine: number }; command: { title: string; arguments: unknown[] } }> =>
    reviews.provideCodeLenses(doc) as never;
  assert.deepEqual(lenses().map((l) => l.command.title), [
    '$(check-all) Apply 3 of 3 changes',
    '$(close-all) Reject all',
    '$(check) Accepted (+1 −1 lines) · Reject',
    '$(check) Accepted (+2 −0 lines) · Reject',
    '$(check) Accepted (+1 −1 lines) · Reject',
  ]);
  const third = lenses()[4];
  assert.equal(third.range.startLine, 7);
  commandHandlers.get('coderLs.review.toggle')?.(...third.command.arguments);
  assert.match(lenses()[4].command.title, /Rejected .* · Accept/);
  assert.equal(lenses()[0].command.title, '$(check-all) Apply 2 of 3 changes');
  assert.match(reviews.provideTextDocumentContent(right as never), /return a \+ b\n$/, 'the right side shows the choice');
  assert.equal(progresses.length, 0, 'no notification of its own: the chat (or the run\'s one notification) says Coder waits');
  assert.deepEqual(reviews.pending().map((r) => r.label), ['Coder wants to edit app.py'], 'the chat lists it');
  commandHandlers.get('coderLs.review.apply')?.(right);
  const kept = await pending;
  assert.deepEqual(kept?.[0].hunks.map((h) => h.accepted), [true, true, false]);
});

test('the list of changes: untick one (the right side drops it), Enter applies the rest; hiding it decides nothing', async () => {
  const reviews = freshReviews();
  const pending = (await opened(reviews, [file()])).answer;
  const list = quickPicks[0];
  assert.ok(list.visible && list.canSelectMany && list.ignoreFocusOut);
  const items = list.items as Array<{ label: string; description: string; detail: string }>;
  assert.deepEqual(items.map((i) => [i.label, i.description, i.detail]), [
    ['app.py:2', '+1 −1 lines', 'return a + b'],
    ['app.py:5', '+2 −0 lines', '# multiply'],
    ['app.py:8', '+1 −1 lines', 'return a * b'],
  ]);
  assert.equal(list.selectedItems.length, 3, 'every change starts accepted');
  list.select([items[1], items[2]]);
  const right = (calls.find((c) => c.fn === 'executeCommand' && c.args[0] === 'vscode.diff')?.args[2]) as never;
  assert.match(reviews.provideTextDocumentContent(right), /return a - b/, 'the rejected change left the right side');
  // a lens click and the list stay in step
  activeEditor(right);
  const lens = (reviews.provideCodeLenses({ uri: right } as never) as Array<{ command: { arguments: unknown[] } }>)[2];
  commandHandlers.get('coderLs.review.toggle')?.(...lens.command.arguments);
  assert.equal(list.selectedItems.length, 3);
  list.select([items[1], items[2]]);
  list.hide();
  commandHandlers.get('coderLs.review.choose')?.(right);
  const again = quickPicks[1];
  assert.ok(again.visible && again.selectedItems.length === 2, 'reopened with the choice kept');
  again.accept();
  const kept = await pending;
  assert.deepEqual(kept?.[0].hunks.map((h) => h.accepted), [false, true, true]);
  assert.ok(again.disposed, 'the list goes away with the review');
});

test("Reject all, the chat's Reject, or nothing accepted: the edit is rejected", async () => {
  const reviews = freshReviews();
  const a = (await opened(reviews, [file()], 'edit')).answer;
  activeEditor(newestRight());
  commandHandlers.get('coderLs.review.reject')?.();
  assert.equal(await a, null);
  activeEditor(undefined); // the chat's buttons need no editor: they name the review
  const b = (await opened(reviews, [file()], 'edit')).answer;
  await reviews.act(reviews.pending()[0].id, 'reject');
  assert.equal(await b, null);
  assert.deepEqual(reviews.pending(), [], 'answered: gone from the chat');
  const f = file();
  for (const h of f.hunks) h.accepted = false;
  const c = (await opened(reviews, [f], 'edit')).answer;
  activeEditor(newestRight());
  commandHandlers.get('coderLs.review.apply')?.();
  assert.equal(await c, null);
});

test("the chat's Apply applies the ticked changes; its Show opens the diff and the list again", async () => {
  const reviews = freshReviews();
  const pending = (await opened(reviews, [file()])).answer;
  const id = reviews.pending()[0].id;
  quickPicks[0].select([quickPicks[0].items[0]]); // two of three unticked in the list
  quickPicks[0].hide();
  const diffs = calls.filter((c) => c.fn === 'executeCommand' && c.args[0] === 'vscode.diff').length;
  await reviews.act(id, 'show');
  assert.equal(calls.filter((c) => c.fn === 'executeCommand' && c.args[0] === 'vscode.diff').length, diffs + 1);
  assert.equal(quickPicks.at(-1)?.visible, true, 'the list is back');
  await reviews.act(id, 'apply');
  const kept = await pending;
  assert.deepEqual(kept?.[0].hunks.map((h) => h.accepted), [true, false, false]);
});

test('a review the server withdraws ($/cancelRequest: the turn stopped or timed out) closes and applies nothing', async () => {
  const reviews = freshReviews();
  const listeners: Array<() => void> = [];
  const token = {
    isCancellationRequested: false,
    onCancellationRequested: (fn: () => void) => (listeners.push(fn), { dispose() {} }),
  };
  const pending = (await opened(reviews, [file()], 'Coder wants to edit app.py', token)).answer;
  assert.equal(quickPicks[0].visible, true);
  token.isCancellationRequested = true;
  for (const l of listeners) l();
  assert.equal(await pending, null);
  assert.ok(quickPicks[0].disposed, 'its list is gone');
  const said = calls.filter((c) => c.fn === 'showInformationMessage').map((c) => String(c.args[0]));
  assert.ok(said.some((m) => /withdrawn by Coder/.test(m)), said.join('|'));
});

test('a command: link clicked elsewhere cannot answer or change a review', async () => {
  const reviews = freshReviews();
  const pending = (await opened(reviews, [file()])).answer;
  const right = newestRight() as { path: string };
  const lens = (reviews.provideCodeLenses({ uri: right } as never) as Array<{ command: { arguments: unknown[] } }>)[2];
  let answered = false;
  void pending.then(() => (answered = true));
  // a README is the active editor: `command:coderLs.review.apply`, with no argument, with
  // the review's URI (a link can name it: `{"$mid":1,...}` is revived as a URI), toggles
  activeEditor({ path: '/ws/README.md', toString: () => 'file:///ws/README.md' });
  commandHandlers.get('coderLs.review.apply')?.();
  commandHandlers.get('coderLs.review.apply')?.(right);
  commandHandlers.get('coderLs.review.reject')?.({ path: right.path });
  commandHandlers.get('coderLs.review.toggle')?.(...lens.command.arguments);
  commandHandlers.get('coderLs.review.choose')?.();
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(answered, false, 'the review is still waiting for the user');
  assert.equal(quickPicks.length, 1, 'no list reopened');
  assert.equal(quickPicks[0].selectedItems.length, 3, 'no change unticked');
  // the diff in front, another review named: ignored too; the review shown: applied
  activeEditor(right);
  commandHandlers.get('coderLs.review.apply')?.({ path: '/999/0/proposed/app.py' });
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(answered, false);
  commandHandlers.get('coderLs.review.apply')?.(right);
  assert.deepEqual((await pending)?.[0].hunks.map((h) => h.accepted), [true, true, true]);
});
