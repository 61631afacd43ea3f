import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Controller } from '../../src/controller';
import type { CoderEvent } from '../../src/protocol';
import type { Entry } from '../../src/transcript';
import { renderEntry } from '../../src/webview/render';
import { FakeTransport, result } from '../helpers/fakeTransport';

// Edit and resend (contract section 22): coder.input {text, replaces}; the server forks.

function ev(type: string, payload: Record<string, unknown>, submissionId: string, sessionId = 's1'): CoderEvent {
  return { sessionId, submissionId, seq: 0, type, ...payload } as CoderEvent;
}

function twoTurns(controller: Controller): void {
  controller.transcript.state.sessionId = 's1';
  for (const [sub, text, answer] of [
    ['u1', 'first', 'one'],
    ['u2', 'second', 'two'],
  ]) {
    controller.handleEvent(ev('userMessage', { text }, sub));
    controller.handleEvent(ev('assistantMessage', { text: answer }, sub));
    controller.handleEvent(ev('turnFinished', { status: 'completed' }, sub));
  }
}

test('a past user message offers Edit and resend; a pending one does not', () => {
  const base = { id: 1, rev: 1 };
  const html = renderEntry({ ...base, kind: 'user', text: 'hi <b>', pending: false, submissionId: 'u"1' } as Entry);
  assert.match(html, /data-resend="u&quot;1"/);
  assert.match(html, /Edit and resend/);
  assert.ok(!renderEntry({ ...base, kind: 'user', text: 'hi', pending: true } as Entry).includes('data-resend'));
});

test('resend sends replaces; on the fork the transcript keeps what came before the message', async () => {
  let controller!: Controller;
  const transport = new FakeTransport((command, arg) => {
    assert.equal(command, 'coder.input');
    controller.handleEvent(ev('sessionChanged', { reason: 'fork', previousSessionId: 's1' }, 'u3', 's2'));
    controller.handleEvent(ev('userMessage', { text: arg.text }, 'u3', 's2'));
    controller.handleEvent(ev('assistantMessage', { text: 'three' }, 'u3', 's2'));
    return result({ sessionId: 's2', submissionId: 'u3', mode: 'nl', reply: 'three' });
  });
  controller = new Controller(transport);
  twoTurns(controller);
  const r = await controller.resend('second, edited', 'u2');
  assert.equal(r.sessionId, 's2');
  assert.deepEqual(transport.sent[0].arg, { text: 'second, edited', replaces: 'u2', sessionId: 's1' });
  const texts = controller.transcript.entries.filter((e) => e.kind !== 'notice').map((e) => (e as { text: string }).text);
  assert.deepEqual(texts, ['first', 'one', 'second, edited', 'three']);
  assert.equal(controller.sessionId, 's2');
});

test('a refused resend cuts nothing', async () => {
  const refused = result({ mode: 'error', status: 'failed', error: { code: 'busy', message: 'busy. Nothing was changed.' } });
  const controller = new Controller(new FakeTransport(() => refused));
  twoTurns(controller);
  await controller.resend('again', 'u1');
  const users = controller.transcript.entries.filter((e) => e.kind === 'user').map((e) => (e as { text: string }).text);
  assert.deepEqual(users.slice(0, 2), ['first', 'second']);
  // a later fork (another resend) is not confused by the refused one
  controller.handleEvent(ev('sessionChanged', { reason: 'fork', previousSessionId: 's1' }, 'x', 's3'));
  assert.ok(controller.transcript.entries.some((e) => e.kind === 'user' && e.text === 'first'));
});
