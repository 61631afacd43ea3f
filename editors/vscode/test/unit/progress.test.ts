import { progresses, reset } from '../helpers/vscodeMock';
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { Controller, progressTitle } from '../../src/controller';
import { ProgressCenter, withCancel } from '../../src/runProgress';
import { contextPercent, statusText } from '../../src/statusBar';
import { FakeTransport, result } from '../helpers/fakeTransport';

beforeEach(reset);

/** A controller whose submissions show the extension's Cancel notification. */
function setup(handler: ConstructorParameters<typeof FakeTransport>[0]) {
  const transport = new FakeTransport(handler);
  const controller = new Controller(transport);
  controller.progressUi = (title, work) =>
    withCancel(title, {
      interrupt: () => controller.interrupt(),
      waitingForApproval: () => controller.waitingForApproval,
      onDidChange: (l) => controller.subscribe(l),
    }, work);
  return { transport, controller };
}

test('a submission shows a cancellable notification; Cancel sends coder.interrupt for the session', async () => {
  let release: (value: unknown) => void = () => undefined;
  const { transport, controller } = setup((command) =>
    command === 'coder.input'
      ? new Promise((resolve) => (release = resolve))
      : result({ data: { kind: 'interrupt', cancelledSubmissions: ['sub1'] } }),
  );
  controller.transcript.state.sessionId = 'sess-1';
  const running = controller.submit('!sleep 30');
  await new Promise((r) => setImmediate(r));
  assert.equal(progresses.length, 1);
  const shown = progresses[0];
  assert.deepEqual(shown.options, { location: 15, title: 'Coder: !sleep 30', cancellable: true });
  shown.cancel();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(transport.sent.at(-1), { command: 'coder.interrupt', arg: { sessionId: 'sess-1' } });
  assert.ok(shown.messages.includes('Cancelling…'));
  release(result({ mode: 'raw', status: 'cancelled', command: 'sleep 30', exitCode: null }));
  const res = await running;
  assert.equal(res.status, 'cancelled');
  assert.equal(shown.done, true);
});

test('the notification follows the server progress and says "Waiting for approval" while asked', async () => {
  let release: (value: unknown) => void = () => undefined;
  const transport = new FakeTransport(() => new Promise((resolve) => (release = resolve)));
  const controller = new Controller(transport);
  controller.progressUi = (title, work) =>
    withCancel(title, {
      interrupt: () => controller.interrupt(),
      waitingForApproval: () => controller.waitingForApproval,
      onDidChange: (l) => controller.subscribe(l),
    }, work);
  const running = controller.submit('fix the bug');
  await new Promise((r) => setImmediate(r));
  const report = transport.onProgress;
  assert.ok(report, 'the transport got no progress callback');
  report('Thinking');
  controller.handleEvent({ type: 'approvalRequested', sessionId: 's1', submissionId: 'sub1', callId: 'c1', tool: 'bash', summary: 'rm x' });
  assert.equal(controller.waitingForApproval, true);
  assert.equal(statusText(null, controller.busy, controller.waitingForApproval), '$(question) Waiting for approval');
  report('Thinking'); // the server's message does not hide the question
  controller.handleEvent({ type: 'approvalResolved', sessionId: 's1', submissionId: 'sub1', callId: 'c1', decision: 'allowOnce' });
  report('Running: rm x');
  release(result({ mode: 'nl', reply: 'done' }));
  await running;
  assert.deepEqual(progresses[0].messages, ['Thinking', 'Waiting for approval', 'Thinking', 'Running: rm x']);
  assert.equal(controller.waitingForApproval, false);
});

test('an approval left open when the turn ends is not waited for any more', () => {
  const controller = new Controller(new FakeTransport());
  controller.handleEvent({ type: 'approvalRequested', sessionId: 's1', submissionId: 'sub1', callId: 'c1', tool: 'bash', summary: 'x' });
  assert.equal(controller.waitingForApproval, true);
  controller.handleEvent({ type: 'turnFinished', sessionId: 's1', submissionId: 'sub1', status: 'cancelled' });
  assert.equal(controller.waitingForApproval, false);
});

test('background look-ups show no notification; titles', async () => {
  const { controller } = setup(() => result());
  await controller.refreshCatalog();
  await controller.run('coder.sessions', {}, { silent: true });
  assert.equal(progresses.length, 0);
  assert.equal(progressTitle('/help'), 'Coder: /help');
  assert.equal(progressTitle('please fix\nthe bug'), 'Coder');
});

test('status bar: the model and provider the server reported; a resume asks the server again', async () => {
  let current = 'claude-sonnet-4-5';
  const { controller, transport } = setup((command) =>
    command === 'coder.model'
      ? result({ data: { kind: 'model', current, provider: 'scripted', models: [] } })
      : result({ data: { kind: 'resumed', session: { id: 'old', title: '', updatedAt: '', updated: '', messageCount: 1 }, messageCount: 1 } }),
  );
  await controller.refreshModel();
  const { state } = controller.transcript;
  assert.equal(statusText(state.model, false, false, state.provider), '$(hubot) claude-sonnet-4-5 (scripted)');
  controller.handleEvent({ type: 'modelChanged', sessionId: 's1', submissionId: 'x', model: 'scripted', provider: 'scripted' });
  assert.equal(statusText(state.model, false, false, state.provider), '$(hubot) scripted (scripted)');
  current = 'claude-opus-4-1';
  await controller.run('coder.resume', { args: 'old' });
  await new Promise((r) => setImmediate(r));
  assert.equal(transport.sent.filter((s) => s.command === 'coder.model').length, 2);
  assert.equal(state.model, 'claude-opus-4-1');
  assert.equal(statusText('claude-opus-4-1', true, false, 'anthropic'), '$(loading~spin) claude-opus-4-1');
});

test('status bar: the share of the context window in use, from contextUsage; a new session clears it', () => {
  const controller = new Controller(new FakeTransport());
  const { state } = controller.transcript;
  assert.equal(contextPercent(state.context), null);
  assert.equal(statusText('claude-sonnet-4-5', false, false, 'anthropic', contextPercent(state.context)), '$(hubot) claude-sonnet-4-5');
  controller.handleEvent({ type: 'contextUsage', sessionId: 's1', submissionId: 'x', usedTokens: 24_600, limitTokens: 200_000 });
  assert.equal(contextPercent(state.context), 12);
  assert.equal(statusText('claude-sonnet-4-5', false, false, 'anthropic', contextPercent(state.context)), '$(hubot) claude-sonnet-4-5 · 12%');
  controller.handleEvent({ type: 'contextUsage', sessionId: 's1', submissionId: 'y', usedTokens: 900_000, limitTokens: 0 });
  assert.equal(contextPercent(state.context), null); // no window reported: no share
  controller.handleEvent({ type: 'contextUsage', sessionId: 's1', submissionId: 'z', usedTokens: 250_000, limitTokens: 200_000 });
  assert.equal(contextPercent(state.context), 100);
  controller.handleEvent({ type: 'sessionChanged', sessionId: 's2', submissionId: 'n', reason: 'new' });
  assert.equal(contextPercent(state.context), null);
});

// Issue 38, point 4: at most one progress notification, and none while the chat is visible
// (the chat shows the run itself); the status bar keeps its item.

/** A controller whose runs go through one ProgressCenter; the chat's visibility is `chat.visible`. */
function centered(handler: ConstructorParameters<typeof FakeTransport>[0]) {
  const transport = new FakeTransport(handler);
  const controller = new Controller(transport);
  const chat = { visible: false };
  const center = new ProgressCenter({
    interrupt: () => controller.interrupt(),
    waitingForApproval: () => controller.waitingForApproval,
    onDidChange: (l) => controller.subscribe(l),
    chatVisible: () => chat.visible,
  });
  controller.progressUi = (title, work) => center.run(title, work);
  return { transport, controller, chat, center };
}

test('no notification while the chat is visible: the chat shows the server progress, the status bar spins', async () => {
  let release: (value: unknown) => void = () => undefined;
  const { transport, controller, chat } = centered(() => new Promise((resolve) => (release = resolve)));
  chat.visible = true;
  const running = controller.submit('fix the bug');
  await new Promise((r) => setImmediate(r));
  transport.onProgress?.('Running: pytest -q');
  assert.equal(progresses.length, 0, 'no notification');
  assert.equal(controller.progress, 'Running: pytest -q', 'what the chat shows');
  assert.equal(statusText(null, controller.busy), '$(loading~spin) Coder', 'the status bar keeps its item');
  release(result({ mode: 'nl', reply: 'done' }));
  await running;
  assert.equal(controller.progress, '');
});

test('at most one notification, whatever runs at once; it goes when the chat shows and comes back when it hides', async () => {
  const releases: Array<(value: unknown) => void> = [];
  const { transport, controller, chat, center } = centered((command) =>
    command === 'coder.interrupt' ? result() : new Promise((resolve) => releases.push(resolve)),
  );
  const a = controller.submit('fix the bug');
  const b = controller.submit('/review');
  await new Promise((r) => setImmediate(r));
  assert.equal(progresses.length, 1, 'one notification for two runs');
  transport.onProgress?.('Thinking');
  assert.deepEqual(progresses[0].messages, ['Thinking']);
  chat.visible = true;
  center.visibilityChanged();
  await new Promise((r) => setImmediate(r));
  assert.equal(progresses[0].done, true, 'the chat is open: the notification goes');
  chat.visible = false;
  center.visibilityChanged();
  await new Promise((r) => setImmediate(r));
  assert.equal(progresses.length, 2, 'hidden again while it runs: it comes back');
  assert.deepEqual(progresses[1].messages, ['Thinking'], 'with what runs now');
  progresses[1].cancel();
  await new Promise((r) => setImmediate(r));
  assert.equal(transport.sent.filter((s) => s.command === 'coder.interrupt').length, 1, 'its Cancel stops the session');
  for (const r of releases) r(result({ mode: 'nl', status: 'cancelled' }));
  await Promise.all([a, b]);
  await new Promise((r) => setImmediate(r));
  assert.equal(progresses[1].done, true);
  assert.equal(progresses.filter((p) => !p.done).length, 0);
});

test("a code action VS Code runs itself counts as running for the chat, and shares the one notification", async () => {
  let release: (value: unknown) => void = () => undefined;
  const { controller, center } = centered(() => new Promise((resolve) => (release = resolve)));
  const other = controller.submit('fix the bug');
  await new Promise((r) => setImmediate(r));
  let done: (v: unknown) => void = () => undefined;
  const action = center.run('Coder', () => controller.during(() => new Promise((resolve) => (done = resolve))));
  await new Promise((r) => setImmediate(r));
  assert.equal(progresses.length, 1);
  assert.equal(controller.busy, true);
  done(result());
  await action;
  release(result({ mode: 'nl' }));
  await other;
  assert.equal(controller.busy, false);
});
