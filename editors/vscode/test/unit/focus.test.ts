import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type FocusWindow, followFocus, SHOW_CHAT, showNotify } from '../../src/focus';

/** A stand-in for `vscode.window`: its focus, its listeners and the notifications shown. */
function fakeWindow(focused: boolean, pick?: string) {
  const listeners: Array<(state: { focused: boolean }) => unknown> = [];
  const shown: Array<{ level: string; message: string; items: string[] }> = [];
  const window: FocusWindow & { change(focused: boolean): void } = {
    state: { focused },
    onDidChangeWindowState(listener) {
      listeners.push(listener);
      return { dispose: () => listeners.splice(listeners.indexOf(listener), 1) };
    },
    showInformationMessage: async (message, ...items) => {
      shown.push({ level: 'info', message, items });
      return pick;
    },
    showWarningMessage: async (message, ...items) => {
      shown.push({ level: 'warning', message, items });
      return pick;
    },
    change(now: boolean) {
      for (const l of [...listeners]) l({ focused: now });
    },
  };
  return { window, shown, listeners };
}

test('the focus is sent at once, then on each change of the window state, and not repeated', async () => {
  const { window, listeners } = fakeWindow(true);
  const sent: boolean[] = [];
  const sub = followFocus(window, async (focused) => sent.push(focused));
  assert.deepEqual(sent, [true]);
  window.change(false);
  window.change(false); // VS Code repeats the state: one message
  window.change(true);
  assert.deepEqual(sent, [true, false, true]);
  sub.dispose();
  assert.equal(listeners.length, 0);
  window.change(false);
  assert.deepEqual(sent, [true, false, true]);
});

test('a failed coder.focus is logged, never thrown', async () => {
  const { window } = fakeWindow(false);
  const logged: string[] = [];
  followFocus(window, async () => Promise.reject(new Error('server gone')), (m) => logged.push(m));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(logged, ['coder.focus failed: server gone']);
});

test('coder/notify is shown as a notification whose button reveals the chat', async () => {
  const { window, shown } = fakeWindow(false, SHOW_CHAT);
  let revealed = 0;
  await showNotify({ kind: 'turnFinished', status: 'completed', message: 'Coder finished: done.' }, window, () => revealed++);
  await showNotify({ kind: 'approval', message: 'Coder is waiting for your answer: run `npm test`' }, window, () => revealed++);
  await showNotify({ kind: 'turnFinished', status: 'failed', message: 'Coder: the turn failed.' }, window, () => revealed++);
  assert.deepEqual(shown, [
    { level: 'info', message: 'Coder finished: done.', items: [SHOW_CHAT] },
    { level: 'info', message: 'Coder is waiting for your answer: run `npm test`', items: [SHOW_CHAT] },
    { level: 'warning', message: 'Coder: the turn failed.', items: [SHOW_CHAT] },
  ]);
  assert.equal(revealed, 3);
});

test('a notification dismissed reveals nothing', async () => {
  const { window } = fakeWindow(false, undefined);
  let revealed = 0;
  await showNotify({ kind: 'question', message: 'Coder has a question for you: which?' }, window, () => revealed++);
  assert.equal(revealed, 0);
});

test('the agent\'s words in a notification stay text: no live link', async () => {
  const { window, shown } = fakeWindow(false);
  await showNotify({ kind: 'turnFinished', status: 'completed', message: 'Coder finished: [tidy](command:coder.shell?%7B%7D)' }, window, () => 0);
  assert.equal(shown[0].message, 'Coder finished: [tidy]\u200b(command:coder.shell?%7B%7D)');
  assert.ok(!shown[0].message.includes(']('));
});
