import { reset, setSetting, textDocuments, vscode } from '../helpers/vscodeMock';
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildServerConfig } from '../../src/config';
import { saveEditedFile, saveEditedFilesEnabled } from '../../src/documents';
import { documentToRevert, documentToSave, documentsToSaveAfterApply, type SaveableDocument, saveAfterEdit } from '../../src/saveEdits';

beforeEach(reset);

class FakeDoc implements SaveableDocument {
  saves = 0;
  readonly uri: { toString(): string };
  constructor(
    uri: string,
    public isDirty = true,
    public isUntitled = false,
    private readonly result: boolean | Error = true,
  ) {
    this.uri = vscode.Uri.parse(uri);
  }
  async save(): Promise<boolean> {
    this.saves++;
    if (this.result instanceof Error) throw this.result;
    this.isDirty = !this.result;
    return this.result;
  }
}

const A = 'file:///w/a.py';
const edit = (applied: boolean, uri = A) => ({ type: 'editApplied', uri, applied, sessionId: 's1', submissionId: 'sub1', seq: 3 });

test('setting on (default): an applied edit saves the dirty open document', async () => {
  const a = new FakeDoc(A);
  const b = new FakeDoc('file:///w/b.py');
  textDocuments.push(b, a);
  assert.equal(saveEditedFilesEnabled(), true);
  assert.equal(await saveEditedFile(edit(true)), true);
  assert.equal(a.saves, 1);
  assert.equal(b.saves, 0);
  assert.equal(a.isDirty, false);
});

test('setting off: nothing is saved', async () => {
  const a = new FakeDoc(A);
  textDocuments.push(a);
  setSetting('coder.saveEditedFiles', false);
  assert.equal(saveEditedFilesEnabled(), false);
  assert.equal(await saveEditedFile(edit(true)), false);
  assert.equal(a.saves, 0);
  setSetting('coder.saveEditedFiles', true, 'workspaceFolderValue');
  assert.equal(await saveEditedFile(edit(true)), true);
  assert.equal(a.saves, 1);
});

test('applied: false, or another event type: nothing is saved', async () => {
  const a = new FakeDoc(A);
  textDocuments.push(a);
  assert.equal(await saveEditedFile(edit(false)), false);
  assert.equal(await saveEditedFile({ type: 'toolCallEnd', uri: A, applied: true }), false);
  assert.equal(await saveEditedFile({ type: 'editApplied', uri: A }), false);
  assert.equal(await saveEditedFile(null), false);
  assert.equal(await saveEditedFile('editApplied'), false);
  assert.equal(a.saves, 0);
});

test('not open, not dirty, or untitled: nothing is saved', async () => {
  assert.equal(await saveEditedFile(edit(true)), false); // no documents at all
  const clean = new FakeDoc(A, false);
  const other = new FakeDoc('file:///w/other.py');
  const untitled = new FakeDoc('untitled:Untitled-1', true, true);
  textDocuments.push(clean, other, untitled);
  assert.equal(await saveEditedFile(edit(true)), false);
  assert.equal(await saveEditedFile(edit(true, 'untitled:Untitled-1')), false);
  assert.deepEqual([clean.saves, other.saves, untitled.saves], [0, 0, 0]);
});

test('the wire URI is compared in the editor\'s spelling (Uri.parse(uri).toString())', () => {
  const doc = new FakeDoc('file:///c%3A/w/a.py');
  const env = { enabled: true, documents: [doc], normalize: (u: string) => u.replace('file:///c:/', 'file:///c%3A/') };
  assert.equal(documentToSave(edit(true, 'file:///c:/w/a.py'), env), doc);
  const throwing = { ...env, normalize: (): string => { throw new Error('bad uri'); } };
  assert.equal(documentToSave(edit(true, 'file:///c:/w/a.py'), throwing), undefined);
});

test('a failed save is logged, never thrown', async () => {
  const logs: string[] = [];
  const failing = new FakeDoc(A, true, false, new Error('EACCES'));
  const env = { enabled: true, documents: [failing], normalize: (u: string) => u, log: (m: string) => logs.push(m) };
  assert.equal(await saveAfterEdit(edit(true), env), false);
  const refused = new FakeDoc(A, true, false, false);
  assert.equal(await saveAfterEdit(edit(true), { ...env, documents: [refused] }), false);
  assert.equal(logs.length, 2);
  assert.match(logs[0], /a\.py.*EACCES/);
});

test('coder.saveEditedFiles is client-only: never sent to the server', () => {
  setSetting('coder.saveEditedFiles', false);
  setSetting('coder.maxSteps', 3);
  assert.deepEqual(buildServerConfig(vscode.workspace.getConfiguration('coder')), { maxSteps: 3 });
});

test('onDisk: true (the server wrote the file itself): the loaded copy is never saved', async () => {
  const a = new FakeDoc(A);
  textDocuments.push(a);
  const onDisk = { ...edit(true), onDisk: true };
  assert.equal(documentToSave(onDisk, { enabled: true, documents: [a], normalize: (u) => u }), undefined);
  assert.equal(await saveEditedFile(onDisk), false);
  assert.equal(a.saves, 0);
  assert.equal(a.isDirty, true);
  // the same edit applied in the editor (onDisk false or absent) is saved
  assert.equal(await saveEditedFile({ ...edit(true), onDisk: false }), true);
  assert.equal(a.saves, 1);
});

test('after applyEdit: the edited documents that were open are saved, before the answer', () => {
  const a = new FakeDoc(A);
  const b = new FakeDoc('file:///w/b.py'); // loaded by VS Code only to apply the edit
  const c = new FakeDoc('file:///w/c.py'); // open and dirty, but not in the edit
  const env = { enabled: true, documents: [a, b, c] };
  const edited = [A, 'file:///w/b.py'];
  const openBefore = new Set([A, 'file:///w/c.py']);
  assert.deepEqual(documentsToSaveAfterApply(edited, openBefore, env), [a]);
  assert.deepEqual(documentsToSaveAfterApply(edited, openBefore, { ...env, enabled: false }), []);
  a.isDirty = false;
  assert.deepEqual(documentsToSaveAfterApply(edited, openBefore, env), []);
});

test('onDisk: the dirty copy VS Code loaded is the one to revert (never saved); not without onDisk', () => {
  const a = new FakeDoc(A);
  const env = { documents: [a], normalize: (u: string) => u };
  assert.equal(documentToRevert({ ...edit(true), onDisk: true }, env), a);
  assert.equal(documentToRevert({ ...edit(true), onDisk: false }, env), undefined);
  assert.equal(documentToRevert({ ...edit(false), onDisk: true }, env), undefined);
  a.isDirty = false;
  assert.equal(documentToRevert({ ...edit(true), onDisk: true }, env), undefined);
});
