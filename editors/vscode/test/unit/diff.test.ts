// Issue 38, point 2: an edit shows its diff inline (collapsed, syntax-coloured), with the
// review's outcome per hunk.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { diffOfChanges } from '../../src/editDiff';
import { highlightLine } from '../../src/highlight';
import type { CoderEvent } from '../../src/protocol';
import { Transcript } from '../../src/transcript';
import { renderEntry } from '../../src/webview/render';

const ORIGINAL = 'def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n';
const at = (line: number, character: number) => ({ line, character });

test('the hunks of the text edits: removed and added lines, two lines of context, where each lands', () => {
  const d = diffOfChanges(ORIGINAL, [
    { start: at(1, 11), end: at(1, 16), newText: 'a + b', accepted: true },
    { start: at(4, 0), end: at(4, 0), newText: '# multiply\n# two numbers\n', accepted: true },
    { start: at(5, 11), end: at(5, 16), newText: 'a * b', accepted: false },
  ]);
  assert.equal(d.hunks.length, 3);
  assert.deepEqual(d.hunks[0], {
    oldStart: 1,
    newStart: 1,
    accepted: true,
    lines: [
      { op: ' ', text: 'def add(a, b):' },
      { op: '-', text: '    return a - b' },
      { op: '+', text: '    return a + b' },
      { op: ' ', text: '' },
      { op: ' ', text: '' },
    ],
  });
  assert.deepEqual(
    d.hunks[1].lines.map((l) => l.op + l.text),
    ['+# multiply', '+# two numbers', ' def mul(a, b):'],
    'an insertion: context only between the hunks, never a changed line',
  );
  assert.equal(d.hunks[2].oldStart, 6);
  assert.equal(d.hunks[2].newStart, 6 + 2, 'the two inserted lines move what follows');
  assert.deepEqual([d.added, d.removed], [3, 1], 'the rejected hunk counts for nothing');
});

test('the whole file replaced by one edit (a write) shows only the lines that differ', () => {
  const d = diffOfChanges('a\nb\nc\nd\ne\nf\n', [{ start: at(0, 0), end: at(6, 0), newText: 'a\nb\nC\nd\ne\nf\n', accepted: true }]);
  assert.deepEqual(
    d.hunks[0].lines.map((l) => l.op + l.text),
    [' a', ' b', '-c', '+C', ' d', ' e'],
  );
  assert.deepEqual([d.added, d.removed], [1, 1]);
});

let seq = 0;
function ev(type: string, payload: Record<string, unknown> = {}): CoderEvent {
  return { sessionId: 's1', submissionId: 'sub1', seq: ++seq, type, ...payload } as CoderEvent;
}

test('an edit call carries its diff: one inline diff per edit, folded, each hunk with what the review made of it', () => {
  const t = new Transcript();
  t.setRoots(['/ws']);
  t.applyEvent(ev('toolCallBegin', { callId: 'w', tool: 'write', input: { path: 'app.py', content: '...' } }));
  t.applyEvent(ev('approvalRequested', { callId: 'w', tool: 'write', summary: 'review the edit of app.py' }));
  // the extension applied the reviewed edit (two changes, the second rejected) and says so first
  t.noteEditDiff(
    'file:///ws/app.py',
    diffOfChanges(
      ORIGINAL,
      [
        { start: at(1, 11), end: at(1, 16), newText: 'a + b', accepted: true },
        { start: at(5, 11), end: at(5, 16), newText: 'a * b', accepted: false },
      ],
      true,
    ),
  );
  t.applyEvent(ev('approvalResolved', { callId: 'w', decision: 'allowOnce' }));
  t.applyEvent(ev('editApplied', { uri: 'file:///ws/app.py', applied: true }));
  // (the server tells the model as an error: it must not redo the rejected change)
  t.applyEvent(ev('toolCallEnd', { callId: 'w', output: 'The user reviewed the edit of app.py and applied 1 of its 2 changes', isError: true }));
  assert.deepEqual(t.entries.map((e) => e.kind), ['tool'], 'the edit is part of its call: no second entry');
  const html = renderEntry(t.entries[0], t.state.roots);
  assert.equal(html.match(/<div class="diff"/g)?.length, 1, 'one inline diff');
  assert.match(html, /^<details class="entry tool done edit"/, 'folded: the diff shows when the call is opened');
  assert.match(html, /<summary>.*Edited .*app\.py.* \(\+1 −1\).*1 of 2 changes rejected in your review.*<\/summary>/);
  assert.match(html, /<div class="hunk accepted"><div class="hunk-head">line 1 · accepted<\/div>/);
  assert.match(html, /<div class="hunk rejected"><div class="hunk-head">line 5 · rejected in your review<\/div>/);
  assert.match(html, /<span class="dl del"><span class="sign">−<\/span>    <span class="tok-keyword">return<\/span> a - b<\/span>/, 'coloured for Python');
  // a second edit of the same call has its own diff
  t.applyEvent(ev('toolCallBegin', { callId: 'm', tool: 'multiEdit', input: { path: 'a.ts', edits: [] } }));
  for (const f of ['a.ts', 'b.ts']) {
    t.noteEditDiff(`file:///ws/${f}`, diffOfChanges('x\n', [{ start: at(0, 0), end: at(0, 1), newText: 'y', accepted: true }]));
    t.applyEvent(ev('editApplied', { uri: `file:///ws/${f}`, applied: true }));
  }
  t.applyEvent(ev('toolCallEnd', { callId: 'm', output: 'Edited a.ts: 2 edits.' }));
  assert.equal(renderEntry(t.entries[1], t.state.roots).match(/<div class="diff"/g)?.length, 2);
});

test('a rejected edit keeps its diff, every hunk marked rejected', () => {
  const t = new Transcript();
  t.applyEvent(ev('toolCallBegin', { callId: 'w', tool: 'write', input: { path: '/ws/victim', content: 'new\n' } }));
  t.noteEditDiff('file:///ws/victim', diffOfChanges('old\n', [{ start: at(0, 0), end: at(1, 0), newText: 'new\n', accepted: false }], true));
  t.applyEvent(ev('editApplied', { uri: 'file:///ws/victim', applied: false, reason: 'the user rejected the edit' }));
  t.applyEvent(ev('toolCallEnd', { callId: 'w', output: 'The user rejected the edit of victim.', isError: true }));
  const html = renderEntry(t.entries[0], ['/ws']);
  assert.match(html, /<summary>.*Did not write .*victim.* · rejected in your review<\/span><\/summary>/);
  assert.ok(!html.includes('+0 −0'), 'nothing applied: no count');
  assert.match(html, /<div class="hunk rejected">/);
});

test('syntax colours: keywords, strings, numbers, comments; everything escaped', () => {
  assert.equal(
    highlightLine('if x < 10: return "a<b"  # done', 'python'),
    '<span class="tok-keyword">if</span> x &lt; <span class="tok-number">10</span>: <span class="tok-keyword">return</span> ' +
      '<span class="tok-string">&quot;a&lt;b&quot;</span>  <span class="tok-comment"># done</span>',
  );
  assert.equal(highlightLine('const s = `<img>`; // x', 'c'), '<span class="tok-keyword">const</span> s = <span class="tok-string">`&lt;img&gt;`</span>; <span class="tok-comment">// x</span>');
  assert.equal(highlightLine('<b>', null), '&lt;b&gt;');
});
