import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CoderEvent } from '../../src/protocol';
import { type Entry, Transcript } from '../../src/transcript';
import { result } from '../helpers/fakeTransport';

let seq = 0;
function ev(type: string, payload: Record<string, unknown> = {}, submissionId = 'sub1'): CoderEvent {
  return { sessionId: 's1', submissionId, seq: ++seq, type, ...payload } as CoderEvent;
}
const kinds = (t: Transcript): string[] => t.entries.map((e) => e.kind);
const only = <K extends Entry['kind']>(t: Transcript, kind: K): Extract<Entry, { kind: K }>[] =>
  t.entries.filter((e): e is Extract<Entry, { kind: K }> => e.kind === kind);

test('assistant deltas merge into one entry; assistantMessage finalizes it', () => {
  const t = new Transcript();
  t.applyEvent(ev('userMessage', { text: 'hi' }));
  t.applyEvent(ev('assistantDelta', { text: 'Hel' }));
  t.applyEvent(ev('assistantDelta', { text: 'lo **wor' }));
  assert.equal(only(t, 'assistant')[0].done, false);
  t.applyEvent(ev('assistantDelta', { text: 'ld**' }));
  t.applyEvent(ev('assistantMessage', { text: 'Hello **world**' }));
  assert.deepEqual(kinds(t), ['user', 'assistant']);
  const a = only(t, 'assistant')[0];
  assert.equal(a.text, 'Hello **world**');
  assert.equal(a.done, true);
  assert.ok(a.rev > 1, 'rev bumps on every change');
  t.applyResult(result({ mode: 'nl', reply: 'Hello **world**' }));
  assert.equal(only(t, 'assistant').length, 1, 'the nl reply does not duplicate the streamed text');
});

test('a tool call splits the stream; begin/end pair by callId, output kept', () => {
  const t = new Transcript();
  t.applyEvent(ev('assistantDelta', { text: 'Let me look.' }));
  t.applyEvent(ev('toolCallBegin', { callId: 'c1', tool: 'read', input: { path: 'a.py' } }));
  t.applyEvent(ev('toolCallBegin', { callId: 'c2', tool: 'grep', input: { pattern: 'x' } }));
  t.applyEvent(ev('toolCallEnd', { callId: 'c1', output: 'print(1)', isError: false }));
  t.applyEvent(ev('toolCallEnd', { callId: 'c2', output: 'no such file', isError: true }));
  t.applyEvent(ev('assistantDelta', { text: 'Done.' }));
  assert.deepEqual(kinds(t), ['assistant', 'tool', 'tool', 'assistant']);
  const [c1, c2] = only(t, 'tool');
  assert.deepEqual([c1.callId, c1.done, c1.isError, c1.output], ['c1', true, false, 'print(1)']);
  assert.deepEqual([c2.callId, c2.done, c2.isError], ['c2', true, true]);
  assert.equal(only(t, 'assistant')[0].done, true, 'text before a tool call is closed');
});

test('shell chunks accumulate in one block; shellFinished and the raw result close it', () => {
  const t = new Transcript();
  t.addUserInput('!echo hello');
  t.applyEvent(ev('shellOutput', { chunk: 'hel' }));
  t.applyEvent(ev('shellOutput', { chunk: 'lo\n' }));
  t.applyEvent(ev('shellFinished', { command: 'echo hello', exitCode: 0 }));
  t.applyResult(result({ mode: 'raw', command: 'echo hello', rawOutput: 'hello\n', exitCode: 0, reply: 'hello\n' }));
  assert.deepEqual(kinds(t), ['user', 'shell']);
  const s = only(t, 'shell')[0];
  assert.deepEqual([s.command, s.output, s.exitCode, s.done], ['echo hello', 'hello\n', 0, true]);
  assert.equal(only(t, 'user')[0].pending, false);
});

test('a raw result without events still shows the output', () => {
  const t = new Transcript();
  t.applyResult(result({ mode: 'raw', command: 'ls', rawOutput: 'a\nb\n', exitCode: 2 }));
  const s = only(t, 'shell')[0];
  assert.deepEqual([s.command, s.output, s.exitCode], ['ls', 'a\nb\n', 2]);
});

test('shell output during a bash tool call goes to that call', () => {
  const t = new Transcript();
  t.applyEvent(ev('toolCallBegin', { callId: 'b', tool: 'bash', input: { command: 'make' } }));
  t.applyEvent(ev('shellOutput', { chunk: 'building\n' }));
  assert.deepEqual(kinds(t), ['tool']);
  assert.equal(only(t, 'tool')[0].output, 'building\n');
  t.applyEvent(ev('toolCallEnd', { callId: 'b', output: 'building\nok\n' }));
  assert.equal(only(t, 'tool')[0].output, 'building\nok\n');
});

test('todo updates replace the list; context usage and model tracked', () => {
  const t = new Transcript();
  t.applyEvent(ev('todoUpdated', { todos: [{ content: 'a', status: 'pending' }] }));
  t.applyEvent(ev('todoUpdated', { todos: [{ content: 'a', status: 'completed' }, { content: 'b', status: 'in_progress' }] }));
  assert.deepEqual(t.state.todos.map((x) => x.status), ['completed', 'in_progress']);
  t.applyEvent(ev('contextUsage', { usedTokens: 1200, limitTokens: 200000 }));
  assert.deepEqual(t.state.context, { usedTokens: 1200, limitTokens: 200000 });
  t.applyEvent(ev('modelChanged', { model: 'm2', provider: 'p' }));
  t.applyEvent(ev('permissionsChanged', { preset: 'yolo' }));
  assert.deepEqual([t.state.model, t.state.preset], ['m2', 'yolo']);
  assert.equal(t.entries.length, 2, 'todos/context are state, model/preset changes are notices');
});

test('unknown or malformed events are ignored', () => {
  const t = new Transcript();
  let changes = 0;
  t.onDidChange(() => changes++);
  assert.equal(t.applyEvent(ev('somethingNew', { x: 1 })), false);
  assert.equal(t.applyEvent(null as unknown as CoderEvent), false);
  assert.equal(t.applyEvent({} as CoderEvent), false);
  assert.equal(t.entries.length, 0);
  assert.equal(changes, 0);
});

test('hookRan is one compact line; a failed hook is an error line', () => {
  const t = new Transcript();
  t.applyEvent(ev('hookRan', { event: 'PreToolUse', name: 'python3 guard.py', decision: 'deny', ms: 12 }));
  t.applyEvent(ev('hookRan', { event: 'Stop', name: './check.sh', decision: 'failed', ms: 3 }));
  assert.deepEqual(
    only(t, 'notice').map((n) => [n.level, n.text]),
    [
      ['info', 'hook PreToolUse python3 guard.py: denied (12 ms)'],
      ['error', 'hook Stop ./check.sh: failed (3 ms)'],
    ],
  );
});

test('sessionChanged tracks the session id; edits, approvals, errors, notices', () => {
  const t = new Transcript();
  t.applyEvent({ sessionId: 'new-session-id', submissionId: 'x', seq: 1, type: 'sessionChanged', reason: 'new' } as CoderEvent);
  assert.equal(t.state.sessionId, 'new-session-id');
  t.applyEvent(ev('editApplied', { uri: 'file:///w/a.py', applied: true }));
  t.applyEvent(ev('editApplied', { uri: 'file:///w/b.py', applied: false, reason: 'user rejected' }));
  t.applyEvent(ev('approvalRequested', { callId: 'c', tool: 'bash', summary: 'rm x' }));
  t.applyEvent(ev('approvalResolved', { callId: 'c', decision: 'allowOnce' }));
  t.applyEvent(ev('error', { message: 'boom' }));
  t.applyEvent(ev('notice', { message: 'fyi' }));
  assert.deepEqual(kinds(t), ['notice', 'edit', 'edit', 'approval', 'notice', 'notice']);
  assert.equal(only(t, 'approval')[0].decision, 'allowOnce');
  assert.deepEqual(only(t, 'notice').map((n) => n.level), ['info', 'error', 'info']);
  t.applyEvent({ sessionId: 's2', submissionId: 'y', seq: 9, type: 'sessionChanged', reason: 'resume' } as CoderEvent);
  assert.equal(t.state.sessionId, 's2');
});

test('turnFinished closes open entries and reports a cancel once', () => {
  const t = new Transcript();
  t.applyEvent(ev('assistantDelta', { text: 'work' }));
  t.applyEvent(ev('toolCallBegin', { callId: 'c', tool: 'bash', input: { command: 'sleep 9' } }));
  t.applyEvent(ev('turnFinished', { status: 'cancelled' }));
  t.applyResult(result({ mode: 'nl', status: 'cancelled', reply: '' }));
  assert.ok(t.entries.every((e) => !('done' in e) || e.done));
  assert.equal(only(t, 'notice').filter((n) => /stopped/i.test(n.text)).length, 1);
});

test('command and error results go into the transcript', () => {
  const t = new Transcript();
  t.addUserInput('/help');
  t.applyResult(result({ mode: 'command', reply: '/help — list commands', sessionId: 'sX' }));
  assert.equal(t.state.sessionId, 'sX');
  t.applyResult(result({ submissionId: 'e', mode: 'error', status: 'failed', error: { code: 'unknownCommand', message: 'Unknown /hlep' } }));
  assert.deepEqual(kinds(t), ['user', 'reply', 'notice']);
  assert.equal(only(t, 'notice')[0].text, 'Unknown /hlep');
});

test('an error event and the error result of the same submission show once', () => {
  const t = new Transcript();
  t.applyEvent(ev('error', { message: 'No API key' }, 'e1'));
  t.applyEvent(ev('turnFinished', { status: 'failed' }, 'e1'));
  t.applyResult(result({ submissionId: 'e1', mode: 'error', status: 'failed', error: { code: 'no_model', message: 'No API key' } }));
  assert.deepEqual(only(t, 'notice').map((n) => n.text), ['No API key', 'The turn failed.']);
});

test('a cancelled !cmd result marks the shell entry cancelled', () => {
  const t = new Transcript();
  t.applyEvent(ev('shellOutput', { chunk: 'x' }, 'sub'));
  t.applyResult(result({ submissionId: 'sub', mode: 'raw', status: 'cancelled', command: 'sleep 30', exitCode: null }));
  const shell = t.entries.find((e) => e.kind === 'shell');
  assert.ok(shell && shell.kind === 'shell' && shell.cancelled === true && shell.done, JSON.stringify(shell));
});

test('assistantRestart drops the text streamed since the step began, not earlier steps', () => {
  const t = new Transcript();
  t.applyEvent(ev('userMessage', { text: 'fix it' }));
  t.applyEvent(ev('assistantDelta', { text: 'Looking at the file.' }));
  t.applyEvent(ev('toolCallBegin', { callId: 'c1', tool: 'read_file', input: { path: 'a.py' } }));
  t.applyEvent(ev('toolCallEnd', { callId: 'c1', output: 'x = 1' }));
  // step 2 streams, then the provider fails mid-stream and retries
  t.applyEvent(ev('reasoningDelta', { text: 'half a thou' }));
  t.applyEvent(ev('assistantDelta', { text: 'The fix is to cha' }));
  t.applyEvent(ev('assistantDelta', { text: 'the other turn' }, 'sub2'));
  t.applyEvent(ev('assistantRestart', { reason: 'overloaded_error' }));
  assert.deepEqual(kinds(t), ['user', 'assistant', 'tool', 'assistant'], 'step 1 and the other submission stay');
  assert.equal(only(t, 'assistant')[0].text, 'Looking at the file.');
  assert.equal(only(t, 'assistant')[1].submissionId, 'sub2');
  t.applyEvent(ev('assistantDelta', { text: 'The fix is to change x.' }));
  t.applyEvent(ev('assistantMessage', { text: 'The fix is to change x.' }));
  const mine = only(t, 'assistant').filter((e) => e.submissionId === 'sub1');
  assert.deepEqual(
    mine.map((e) => e.text),
    ['Looking at the file.', 'The fix is to change x.'],
    'the retried reply shows once, without the failed attempt',
  );
});

test("a subagent's stream stays out of the main reply: it goes to its own entry under its task call", () => {
  const t = new Transcript();
  t.applyEvent(ev('assistantDelta', { text: 'Let me ask a helper. ' }));
  t.applyEvent(ev('toolCallBegin', { callId: 't1', tool: 'task', input: { prompt: 'find add' } }));
  t.applyEvent(ev('subagentStarted', { agentId: 'explore-1', parentCallId: 't1', agent: 'explore', prompt: 'find add\nmore' }));
  t.applyEvent(ev('assistantDelta', { text: 'SUBAGENT TEXT', agentId: 'explore-1', parentCallId: 't1' }));
  t.applyEvent(ev('toolCallBegin', { callId: 'g1', tool: 'grep', input: { pattern: 'def add' }, agentId: 'explore-1', parentCallId: 't1' }));
  t.applyEvent(ev('approvalRequested', { callId: 'c9', tool: 'bash', summary: 'run ls', agentId: 'explore-1' }));
  t.applyEvent(ev('toolCallEnd', { callId: 'g1', output: 'app.py:1', agentId: 'explore-1', parentCallId: 't1' }));
  t.applyEvent(ev('assistantMessage', { text: 'add is in app.py', agentId: 'explore-1', parentCallId: 't1' }));
  t.applyEvent(ev('subagentFinished', { agentId: 'explore-1', parentCallId: 't1', status: 'completed', usage: { inputTokens: 1200, outputTokens: 34, steps: 2 } }));
  t.applyEvent(ev('toolCallEnd', { callId: 't1', output: '[1] explore (completed):\nadd is in app.py' }));
  t.applyEvent(ev('assistantDelta', { text: 'Done.' }));
  const text = only(t, 'assistant').map((a) => a.text).join('|');
  assert.ok(!text.includes('SUBAGENT TEXT') && !text.includes('add is in app.py'), text);
  assert.deepEqual(kinds(t), ['assistant', 'tool', 'subagent', 'approval', 'assistant']);
  const [s] = only(t, 'subagent');
  assert.equal(s.agent, 'explore');
  assert.equal(s.prompt, 'find add\nmore');
  assert.equal(s.status, 'completed');
  assert.equal(s.tokens, 1234);
  assert.equal(s.text, 'add is in app.py');
  assert.deepEqual(s.steps.map((x) => [x.tool, x.done, x.isError]), [['grep', true, false]]);
  assert.equal(only(t, 'tool').length, 1, "the subagent's grep is not a main tool call");
  assert.equal(only(t, 'approval').length, 1, "the subagent's approval is a question of the main transcript");
});

test('parallel subagents stay together under their task call, in start order', () => {
  const t = new Transcript();
  t.applyEvent(ev('toolCallBegin', { callId: 't1', tool: 'task', input: {} }));
  t.applyEvent(ev('approvalRequested', { callId: 'c0', tool: 'bash', summary: 'x' }));
  for (const id of ['general-aaaaaaaa', 'general-bbbbbbbb', 'explore-cccccccc']) {
    t.applyEvent(ev('subagentStarted', { agentId: id, parentCallId: 't1', agent: id.split('-')[0], prompt: id }));
  }
  // a step's event before its start (not expected, but not lost)
  t.applyEvent(ev('toolCallBegin', { callId: 'r1', tool: 'read', input: { path: 'b.py' }, agentId: 'plan-dddddddd', parentCallId: 'task-9' }));
  assert.deepEqual(
    t.entries.map((e) => (e.kind === 'subagent' ? e.agentId : e.kind)),
    ['tool', 'general-aaaaaaaa', 'general-bbbbbbbb', 'explore-cccccccc', 'approval', 'plan-dddddddd'],
  );
  assert.equal(only(t, 'subagent')[3].agent, 'plan', 'the name is read off the id when no start came');
});

test("a subagent's Stop shows at once; its end or the turn's end settles it", () => {
  const t = new Transcript();
  t.applyEvent(ev('toolCallBegin', { callId: 't1', tool: 'task', input: {} }));
  t.applyEvent(ev('subagentStarted', { agentId: 'a-1', parentCallId: 't1', agent: 'general', prompt: 'one' }));
  t.applyEvent(ev('subagentStarted', { agentId: 'b-2', parentCallId: 't1', agent: 'general', prompt: 'two' }));
  t.markStopping('a-1');
  assert.deepEqual(only(t, 'subagent').map((s) => s.status), ['stopping', 'running']);
  t.applyEvent(ev('subagentFinished', { agentId: 'a-1', parentCallId: 't1', status: 'cancelled' }));
  t.markStopping('a-1'); // a late click changes nothing
  assert.deepEqual(only(t, 'subagent').map((s) => s.status), ['cancelled', 'running']);
  t.applyEvent(ev('turnFinished', { status: 'cancelled' }));
  assert.deepEqual(only(t, 'subagent').map((s) => s.status), ['cancelled', 'cancelled'], 'none is left spinning');
});

test("a subagent's answer is capped, its steps too", () => {
  const t = new Transcript();
  t.applyEvent(ev('subagentStarted', { agentId: 'a-1', parentCallId: 't1', agent: 'general', prompt: 'p' }));
  for (let i = 0; i < 80; i++) {
    t.applyEvent(ev('toolCallBegin', { callId: `c${i}`, tool: 'read', input: { path: `f${i}` }, agentId: 'a-1', parentCallId: 't1' }));
    t.applyEvent(ev('assistantDelta', { text: 'x'.repeat(100), agentId: 'a-1', parentCallId: 't1' }));
  }
  const [s] = only(t, 'subagent');
  assert.equal(s.steps.length, 50);
  assert.equal(s.steps[49].input.path, 'f79', 'the last steps are kept');
  assert.equal(s.text.length, 4000);
});

test('plan mode: planProposed is a plan entry with its submission; the reply does not repeat it; an answer closes it', () => {
  const t = new Transcript();
  t.applyEvent(ev('toolCallBegin', { callId: 'p1', tool: 'exit_plan_mode', input: { plan: '1. Fix add()' } }));
  t.applyEvent(ev('toolCallEnd', { callId: 'p1', output: 'handed over', isError: false }));
  t.applyEvent(ev('planProposed', { plan: '1. Fix add()' }, 'subP'));
  t.applyResult(result({ mode: 'nl', reply: '1. Fix add()', submissionId: 'subP' }));
  const [plan] = only(t, 'plan');
  assert.equal(plan.plan, '1. Fix add()');
  assert.equal(plan.submissionId, 'subP');
  assert.equal(plan.answer, null);
  assert.equal(only(t, 'assistant').length, 0, 'the reply is the plan, already shown');
  t.answerPlan('subP', 'approve');
  assert.equal(only(t, 'plan')[0].answer, 'approve');
});
