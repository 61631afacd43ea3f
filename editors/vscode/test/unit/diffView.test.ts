import { calls, reset } from '../helpers/vscodeMock';
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { Controller } from '../../src/controller';
import { TurnDiffs, turnDiffOf } from '../../src/diffView';
import { FakeTransport, result } from '../helpers/fakeTransport';

beforeEach(reset);

const oneFile = {
  kind: 'diff' as const, stat: ' a.txt | 1 +', diff: '+x', files: ['a.txt'], submission: 2,
  changes: [{ path: 'a.txt', before: 'old\n', after: 'new\n' }],
};

test('/diff turn with one file opens vscode.diff on the before and after texts', async () => {
  const diffs = new TurnDiffs();
  assert.equal(await diffs.show(result({ data: oneFile })), true);
  const call = calls.find((c) => c.fn === 'executeCommand');
  assert.ok(call, 'no command executed');
  const [id, left, right, title] = call.args as [string, { toString(): string }, { toString(): string }, string];
  assert.equal(id, 'vscode.diff');
  assert.equal(title, 'Coder: submission 2: a.txt');
  assert.equal(diffs.provideTextDocumentContent(left as never), 'old\n');
  assert.equal(diffs.provideTextDocumentContent(right as never), 'new\n');
});

test('several files open the multi-file diff editor; a created file is empty on the left', async () => {
  const diffs = new TurnDiffs();
  const data = { ...oneFile, files: ['a.txt', 'b.txt'], changes: [...oneFile.changes, { path: 'b.txt', before: null, after: 'B\n' }] };
  await diffs.show(result({ data }));
  const call = calls.find((c) => c.fn === 'executeCommand');
  assert.equal(call?.args[0], 'vscode.changes');
  const list = call?.args[2] as Array<[unknown, { toString(): string }, { toString(): string }]>;
  assert.equal(list.length, 2);
  assert.equal(diffs.provideTextDocumentContent(list[1][1] as never), '');
  assert.equal(diffs.provideTextDocumentContent(list[1][2] as never), 'B\n');
});

test('the workspace /diff, an unchanged submission and other results open nothing', async () => {
  const diffs = new TurnDiffs();
  assert.equal(turnDiffOf(result({ data: { kind: 'diff', stat: '', diff: '', files: [] } })), null);
  assert.equal(await diffs.show(result({ data: { ...oneFile, changes: [] } })), false);
  assert.equal(await diffs.show(result({ reply: 'hi' })), false);
  assert.equal(calls.filter((c) => c.fn === 'executeCommand').length, 0);
});

test('the controller hands each result the user asked for to its listeners, not silent look-ups', async () => {
  const transport = new FakeTransport(() => result({ data: oneFile }));
  const controller = new Controller(transport);
  const seen: unknown[] = [];
  controller.resultListeners.push((r) => seen.push(r.data));
  await controller.submit('/diff turn 2');
  await controller.run('coder.diff', { args: 'turn' }, { silent: true });
  assert.equal(seen.length, 1);
});
