// Issue 38, point 1: the transcript speaks the user's words: relative paths (clickable),
// decisions as words, one sentence per tool call with its outcome, details folded; a
// failed call says so in a sentence with the file name, its input behind an expander.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { diffOfChanges } from '../../src/editDiff';
import type { CoderEvent } from '../../src/protocol';
import { sentenceText, toolSentence } from '../../src/sentences';
import { type Entry, Transcript } from '../../src/transcript';
import { renderEntry } from '../../src/webview/render';

const ROOT = '/tmp/coder-ls-e2e.Ab12/ws';
let seq = 0;
function ev(type: string, payload: Record<string, unknown> = {}, submissionId = 'sub1'): CoderEvent {
  return { sessionId: 's1', submissionId, seq: ++seq, type, ...payload } as CoderEvent;
}

/** A transcript on a clock the test moves. */
function transcript(): { t: Transcript; tick(ms: number): void } {
  let now = 1_000_000;
  const t = new Transcript(() => now);
  t.setRoots([ROOT]);
  return { t, tick: (ms) => (now += ms) };
}

/** What a user reads: the HTML's text, folded parts included (as `textContent`). */
function text(html: string): string {
  return html
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

const html = (t: Transcript): string => t.entries.map((e) => renderEntry(e, t.state.roots)).join('\n');
const tools = (t: Transcript): Extract<Entry, { kind: 'tool' }>[] =>
  t.entries.filter((e): e is Extract<Entry, { kind: 'tool' }> => e.kind === 'tool');
const sentences = (t: Transcript): string[] => tools(t).map((e) => sentenceText(toolSentence(e, t.state.roots)));

/** The protocol's names a user must never read (the enum values of the events). */
const ENUMS = /\b(allowOnce|allowSession|alwaysAllow|deny|completed|in_progress|toolCallBegin|editApplied|isError)\b/;

/** One agent turn of every kind of call the issue names. */
function turn(): { t: Transcript; tick(ms: number): void } {
  const r = transcript();
  const { t, tick } = r;
  t.applyEvent(ev('userMessage', { text: 'fix add' }));
  t.applyEvent(ev('toolCallBegin', { callId: 'g', tool: 'grep', input: { pattern: 'def ' } }));
  t.applyEvent(ev('toolCallEnd', { callId: 'g', output: 'app.py\n1:def add(a, b):\n5:def main():\nutil.py\n1:def double(x):' }));
  t.applyEvent(ev('toolCallBegin', { callId: 'b', tool: 'bash', input: { command: 'pytest -q' } }));
  t.applyEvent(ev('approvalRequested', { callId: 'b', tool: 'bash', summary: 'run `pytest -q`' }));
  t.applyEvent(ev('approvalResolved', { callId: 'b', decision: 'allowSession' }));
  t.applyEvent(ev('shellOutput', { chunk: `FAILED ${ROOT}/test_app.py::test_add\n` }));
  tick(1234);
  t.applyEvent(ev('shellFinished', { command: 'pytest -q', exitCode: 1 }));
  t.applyEvent(ev('toolCallEnd', { callId: 'b', output: `FAILED ${ROOT}/test_app.py::test_add\n[exit code: 1]` }));
  t.applyEvent(ev('toolCallBegin', { callId: 'w', tool: 'write', input: { path: 'util.py', content: 'def double(x):\n    return 2 * x\n' } }));
  t.applyEvent(ev('toolCallEnd', { callId: 'w', output: `refused: ${ROOT}/util.py is read-only\nmore`, isError: true }));
  t.applyEvent(ev('toolCallBegin', { callId: 'e', tool: 'edit', input: { path: `${ROOT}/app.py`, oldString: 'a - b', newString: 'a + b' } }));
  t.applyEvent(ev('approvalRequested', { callId: 'e', tool: 'edit', summary: 'review the edit of app.py' }));
  t.noteEditDiff(
    `file://${ROOT}/app.py`,
    diffOfChanges('def add(a, b):\n    return a - b\n', [{ start: { line: 1, character: 11 }, end: { line: 1, character: 16 }, newText: 'a + b', accepted: true }], true),
  );
  t.applyEvent(ev('approvalResolved', { callId: 'e', decision: 'allowOnce' }));
  t.applyEvent(ev('editApplied', { uri: `file://${ROOT}/app.py`, applied: true }));
  t.applyEvent(ev('toolCallEnd', { callId: 'e', output: 'Edited app.py: replaced 1 occurrence.' }));
  t.applyEvent(ev('approvalRequested', { callId: 'x', tool: 'bash', summary: 'run `rm -rf build`' }));
  t.applyEvent(ev('approvalResolved', { callId: 'x', decision: 'deny' }));
  t.applyEvent(ev('turnFinished', { status: 'completed' }));
  return r;
}

test('paths are relative to the workspace folder, and clickable (the absolute path is only the target)', () => {
  const { t } = turn();
  const out = html(t);
  assert.ok(!text(out).includes(ROOT), text(out));
  assert.match(out, new RegExp(`<a href="#" class="path" data-open="file://${ROOT}/app.py" title="app.py">app.py</a>`));
  assert.ok(text(out).includes('FAILED test_app.py::test_add'), 'tool output names files relative too');
  // an edit no call of the transcript made (a code action's) reads the same
  const lone = transcript().t;
  lone.applyEvent(ev('editApplied', { uri: `file://${ROOT}/src/my%20file.py`, applied: true }));
  assert.match(text(html(lone)), /^Edited src\/my file\.py$/m);
});

test('decisions are words, and no protocol name reaches the text', () => {
  const { t } = turn();
  const out = text(html(t));
  assert.ok(!ENUMS.test(out), `an enum name in: ${out.match(ENUMS)?.[0]}\n${out}`);
  assert.match(out, /Ran pytest -q .*allowed for this session/);
  assert.match(out, /Coder asked to run rm -rf build · denied/);
  const s = transcript().t;
  s.applyEvent(ev('toolCallBegin', { callId: 'b', tool: 'bash', input: { command: 'make' } }));
  s.applyEvent(ev('approvalRequested', { callId: 'b', tool: 'bash', summary: 'run `make`' }));
  assert.equal(sentences(s)[0], 'Running `make`… · waiting for your answer');
  s.applyEvent(ev('approvalResolved', { callId: 'b', decision: 'deny' }));
  s.applyEvent(ev('toolCallEnd', { callId: 'b', output: 'The user denied it: the bash call did not run.', isError: true }));
  assert.equal(sentences(s)[0], 'Did not run `make` · denied');
  s.applyEvent(ev('subagentStarted', { agentId: 'explore-1a2b3c4d', agent: 'explore', prompt: 'look', parentCallId: 'b' }));
  s.applyEvent(ev('subagentFinished', { agentId: 'explore-1a2b3c4d', status: 'completed' }));
  s.applyEvent(ev('turnFinished', { status: 'cancelled' }));
  const all = text(html(s));
  assert.ok(!ENUMS.test(all), all);
  assert.match(all, /explore look done/);
});

test('one sentence per tool call, with its outcome: lines changed, exit code, duration, matches', () => {
  const { t } = turn();
  assert.deepEqual(sentences(t), [
    'Searched for `def ` · 3 matches in 2 files',
    'Ran `pytest -q` · exit 1 · allowed for this session · 1.2 s',
    'Could not write util.py: refused: util.py is read-only',
    'Edited app.py (+1 −1) · accepted in your review',
  ]);
  // the details are folded: the summary is the sentence, the rest inside the closed <details>
  const bash = renderEntry(tools(t)[1], t.state.roots);
  assert.match(bash, /^<details class="entry tool done"[^>]*><summary>.*Ran .*<\/summary><div class="details">.*FAILED/s);
  assert.ok(!/<details[^>]* open/.test(bash), 'folded');
});

test('each tool reads as what it did', () => {
  const one = (tool: string, input: Record<string, unknown>, output: string, extra: Record<string, unknown> = {}): string =>
    sentenceText(toolSentence({ tool, input, output, isError: false, done: true, ...extra }, [ROOT]));
  assert.equal(one('read', { path: `${ROOT}/a.py`, offset: 10, limit: 21 }, 'x'), 'Read a.py · lines 10–30');
  assert.equal(one('glob', { pattern: '**/*.py' }, 'a.py\nb/c.py'), 'Looked for files matching `**/*.py` · 2 files');
  assert.equal(one('glob', { pattern: '*.rs' }, "No files match '*.rs'."), 'Looked for files matching `*.rs` · no files');
  assert.equal(one('grep', { pattern: 'zzz', path: 'src' }, "No matches for 'zzz'."), 'Searched for `zzz` in src · no matches');
  // the server's note on unsaved editor buffers (contract section 23) is no file
  const note = '(unsaved editor buffer: the text the editor holds, changed since the file was saved; searched for: a.ts)';
  assert.equal(one('grep', { pattern: 'x' }, `a.ts\n3:x = 1\nb.ts\n1:x\n${note}`), 'Searched for `x` · 2 matches in 2 files');
  assert.equal(one('grep', { pattern: 'x' }, `a.ts\n3:x = 1\n${note}`), 'Searched for `x` · 1 match');
  assert.equal(one('grep', { pattern: 'zzz' }, `No matches for 'zzz'.\n${note}`), 'Searched for `zzz` · no matches');
  assert.equal(one('ls', { path: '.' }, 'a.py\nsrc/'), 'Listed . · 2 entries');
  assert.equal(one('write', { path: 'new.py', content: 'x' }, 'Created new.py (1 lines).'), 'Created new.py');
  assert.equal(one('task', { tasks: [{ prompt: 'a' }, { prompt: 'b' }] }, '', { startedAt: 0, endedAt: 65_000 }), 'Ran 2 subagents in parallel · 1 min 5 s');
  assert.equal(one('task', { prompt: 'survey the repo\nslowly', agent: 'explore' }, ''), 'Ran the explore subagent: survey the repo');
  assert.equal(one('ask_user', { questions: [{ question: 'Which runner?' }] }, '→ pytest'), 'Asked you Which runner?');
  assert.equal(one('todoWrite', { todos: [{ content: 'a', status: 'completed' }, { content: 'b' }] }, 'ok'), 'Updated the to-do list · 1 of 2 done');
  assert.equal(one('mcp__db__query', { sql: 'select 1' }, 'ok'), 'Used `mcp__db__query`');
  // the editor's language servers (contract section 23)
  assert.equal(one('diagnostics', {}, '1 diagnostic (1 error) in 1 file:'), "Read the editor's problems");
  assert.equal(one('definition', { symbol: 'double', path: 'main.ts', line: 3 }, 'util.ts:1:17: export'), 'Looked up the definition of `double`');
  assert.equal(one('references', { symbol: 'double' }, 'main.ts:3:13: x'), 'Looked up the uses of `double`');
  assert.equal(one('symbols', { query: 'dou' }, 'util.ts:1: function double'), 'Looked up symbols matching `dou`');
  assert.equal(one('bash', { command: 'sleep 99' }, '', { done: true, cancelled: true }), 'Stopped before it could run `sleep 99`');
  assert.equal(one('bash', { command: 'make' }, 'x\n[timed out after 5 s; the command was stopped]', { exitCode: null, timedOut: true }), 'Ran `make` · timed out');
});

test('a failed call says so in a sentence with the file name; its input is behind an expander, as text', () => {
  const { t } = turn();
  const write = renderEntry(tools(t)[2], t.state.roots);
  assert.match(text(write), /^Could not write util\.py: refused: util\.py is read-only/);
  assert.match(write, /<details class="entry tool failed error"/);
  assert.match(write, /<details class="io"><summary>Input<\/summary><div class="input">/);
  // the content as the file would hold it (a real newline), never a JSON string with \n
  assert.ok(write.includes('<pre>def double(x):\n    return 2 * x\n</pre>'), write);
  assert.ok(!write.includes('\\n'), 'no escaped newline');
  assert.ok(!/\{&quot;path&quot;/.test(write), 'no JSON as the message');
  // an error its sentence says whole is not said twice
  const edit = renderEntry({ id: 9, rev: 1, kind: 'tool', callId: 'e', tool: 'edit', input: { path: 'app.py' }, output: 'oldString was not found in app.py.', isError: true, done: true } as Entry, [ROOT]);
  assert.equal(text(edit).split('oldString was not found').length - 1, 1, text(edit));
});
