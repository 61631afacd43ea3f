import '../helpers/vscodeMock';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { contextLabel, imageFromDataUrl, keptPastes, pasteMarker } from '../../src/attachments';
import { type AskParams, type AskUi, askUser, OTHER } from '../../src/askUser';

const range = (a: number, ac: number, b: number, bc: number) => ({ start: { line: a, character: ac }, end: { line: b, character: bc } });

test('the context chip names the file and the 1-based lines', () => {
  assert.equal(contextLabel({ uri: 'file:///ws/src/app%20one.py' }), 'app one.py');
  assert.equal(contextLabel({ uri: 'file:///ws/app.py', range: range(2, 0, 4, 7) }), 'app.py:3-5');
  assert.equal(contextLabel({ uri: 'file:///ws/app.py', range: range(2, 0, 4, 0) }), 'app.py:3-4'); // ends at a line start
  assert.equal(contextLabel({ uri: 'file:///ws/app.py', range: range(6, 1, 6, 9) }), 'app.py:7');
});

test('only the image types the API takes become attachments', () => {
  assert.deepEqual(imageFromDataUrl('data:image/png;base64,iVBORw0KGgo=', 'shot.png'), {
    data: 'iVBORw0KGgo=',
    mediaType: 'image/png',
    name: 'shot.png',
  });
  assert.equal(imageFromDataUrl('data:image/bmp;base64,Qk0=', 'x.bmp'), null);
  assert.equal(imageFromDataUrl('data:text/plain,hello', 'x.txt'), null);
});

test('a deleted paste marker drops its paste; the rest are renumbered in order', () => {
  const text = `see ${pasteMarker(2)} and ${pasteMarker(3)}`;
  assert.deepEqual(keptPastes(text, ['one', 'two', 'three']), { text: 'see [Pasted text #1] and [Pasted text #2]', pastes: ['two', 'three'] });
  assert.deepEqual(keptPastes('typed [Pasted text #9] by hand', ['one']), { text: 'typed [Pasted text #9] by hand', pastes: [] });
});

function ui(picks: unknown[], inputs: (string | undefined)[]): AskUi & { seen: unknown[] } {
  const seen: unknown[] = [];
  return {
    seen,
    showQuickPick: (async (items: unknown, options: unknown) => {
      seen.push({ items, options });
      return picks.shift();
    }) as unknown as AskUi['showQuickPick'],
    showInputBox: (async (options: unknown) => {
      seen.push({ input: options });
      return inputs.shift();
    }) as unknown as AskUi['showInputBox'],
  };
}

const params: AskParams = {
  submissionId: 's1',
  questions: [
    { question: 'Which runner?', header: 'Tests', options: [{ label: 'pytest', description: 'tests/' }, { label: 'unittest' }] },
    { question: 'Which checks?', options: [{ label: 'ruff' }, { label: 'mypy' }], multiSelect: true },
  ],
};

test('askUser: a quick pick per question, several picks when multiSelect, Other asks for words', async () => {
  const fake = ui([{ label: 'pytest' }, [{ label: 'ruff' }, { label: OTHER }]], ['  and black  ']);
  const got = await askUser(params, fake);
  assert.deepEqual(got, { answers: [{ selected: ['pytest'] }, { selected: ['ruff'], other: 'and black' }] });
  const first = fake.seen[0] as { items: { label: string; detail?: string }[]; options: { title: string; placeHolder: string } };
  assert.deepEqual(first.items.map((i) => i.label), ['pytest', 'unittest', OTHER]);
  assert.equal(first.options.title, 'Coder asks (1/2) [Tests]: Which runner?');
  assert.equal(first.options.placeHolder, 'Which runner?');
  assert.equal((fake.seen[1] as { options: { canPickMany?: boolean } }).options.canPickMany, true);
});

test('askUser: Escape on a pick or on the Other box is no answer at all', async () => {
  assert.deepEqual(await askUser(params, ui([undefined], [])), { answers: null });
  assert.deepEqual(await askUser(params, ui([{ label: 'pytest' }, [{ label: OTHER }]], [undefined])), { answers: null });
});
