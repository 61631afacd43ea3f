import { answers, calls, reset } from '../helpers/vscodeMock';
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import type { ChatViewProvider } from '../../src/chatView';
import { Commands } from '../../src/commands';
import { Controller } from '../../src/controller';
import { statusText } from '../../src/statusBar';
import { FakeTransport, result } from '../helpers/fakeTransport';

const panel = { reveal: async () => undefined } as unknown as ChatViewProvider;
beforeEach(reset);

function setup(handler: ConstructorParameters<typeof FakeTransport>[0]) {
  const transport = new FakeTransport(handler);
  const controller = new Controller(transport);
  return { transport, controller, commands: new Commands(controller, panel) };
}

test('an error result pops up showErrorMessage with its message', async () => {
  const { commands, controller } = setup(() =>
    result({ mode: 'error', status: 'failed', error: { code: 'unknownCommand', message: 'Unknown command /hlep' } }),
  );
  await commands.submit('/hlep');
  assert.deepEqual(calls.filter((c) => c.fn === 'showErrorMessage').map((c) => c.args[0]), ['Unknown command /hlep']);
  assert.equal(controller.transcript.entries.at(-1)?.kind, 'notice');
});

test('a normal result goes to the transcript only', async () => {
  const { commands, controller, transport } = setup(() => result({ mode: 'command', reply: 'Commands: /help' }));
  await commands.submit('/help');
  assert.equal(calls.filter((c) => c.fn.startsWith('show')).length, 0);
  assert.deepEqual(transport.sent, [{ command: 'coder.input', arg: { text: '/help' } }]);
  assert.deepEqual(controller.transcript.entries.map((e) => e.kind), ['user', 'reply']);
});

test('the sessionId from a result is sent with the next command', async () => {
  const { commands, transport } = setup(() => result({ sessionId: 'sess-9' }));
  await commands.submit('/help');
  await commands.send('coder.shell', { command: 'ls' });
  assert.deepEqual(transport.sent[1], { command: 'coder.shell', arg: { command: 'ls', sessionId: 'sess-9' } });
});

test('resume: sessions quick pick → coder.resume {args: id}', async () => {
  const { transport } = setup((command) =>
    command === 'coder.sessions'
      ? result({ data: { kind: 'sessions', timezone: 'UTC', sessions: [{ id: 'old-1', title: 'Old', updatedAt: '', updated: '', messageCount: 2 }] } })
      : result({ data: { kind: 'resumed', session: { id: 'old-1', title: 'Old', updatedAt: '', updated: '', messageCount: 2 }, messageCount: 2 } }),
  );
  const c = new Commands(new Controller(transport), panel);
  answers.quickPick.push((items) => items[0]);
  await (c as unknown as { resume(): Promise<void> }).resume();
  // the resumed session has its own model: the status bar asks the server for it
  assert.deepEqual(transport.sent.map((s) => [s.command, s.arg.args]), [
    ['coder.sessions', undefined],
    ['coder.resume', 'old-1'],
    ['coder.model', undefined],
  ]);
});

test('model: quick pick of data.models → coder.model {args: name}; status bar text', async () => {
  const { transport, controller, commands } = setup((_command, arg) =>
    result({ data: { kind: 'model', current: (arg.args as string) ?? 'a', provider: 'p', models: [{ name: 'a', provider: 'p' }, { name: 'b', provider: 'p' }] } }),
  );
  answers.quickPick.push((items) => items[1]);
  await (commands as unknown as { model(): Promise<void> }).model();
  assert.deepEqual(transport.sent.at(-1), { command: 'coder.model', arg: { args: 'b', sessionId: 's1' } });
  assert.equal(controller.transcript.state.model, 'b');
  assert.equal(statusText('b', false), '$(hubot) b');
  assert.equal(statusText(null, true), '$(loading~spin) Coder');
});

test('runCommand: catalog quick pick + args box → coder.input "/name args"', async () => {
  const catalog = [{ name: 'model', description: 'Switch model', argumentHint: '[name]', kind: 'local', source: 'builtin' }];
  const { transport, commands } = setup((command) =>
    command === 'coder.listCommands' ? result({ data: { kind: 'commands', commands: catalog } as never }) : result(),
  );
  answers.quickPick.push((items) => items[0]);
  answers.inputBox.push('gpt-x');
  await (commands as unknown as { runCommand(): Promise<void> }).runCommand();
  assert.deepEqual(transport.sent.map((s) => s.command), ['coder.listCommands', 'coder.input']);
  assert.equal(transport.sent[1].arg.text, '/model gpt-x');
});

test('busy while a request is in flight; a transport failure becomes an error popup', async () => {
  let release: () => void = () => undefined;
  const { controller, commands } = setup(
    () =>
      new Promise((_resolve, reject) => {
        release = () => reject(new Error('Request failed: InvalidParams unknown key "foo"'));
      }),
  );
  const pending = commands.submit('hello');
  await new Promise((r) => setImmediate(r));
  assert.equal(controller.busy, true);
  release();
  await pending;
  assert.equal(controller.busy, false);
  assert.match(String(calls.find((c) => c.fn === 'showErrorMessage')?.args[0]), /InvalidParams/);
});

test('Edit and resend asks for the text (the old one to edit) and sends it with replaces; Escape sends nothing', async () => {
  const { commands, transport } = setup(() => result({ sessionId: 'fork-1', mode: 'nl', reply: 'ok' }));
  answers.inputBox.push(undefined, '  the edited text  ');
  await commands.resend('sub-7', 'the old text');
  assert.equal(transport.sent.length, 0, 'dismissed: nothing sent');
  await commands.resend('sub-7', 'the old text');
  const asked = calls.filter((c) => c.fn === 'showInputBox').map((c) => (c.args[0] as { value: string }).value);
  assert.deepEqual(asked, ['the old text', 'the old text']);
  assert.deepEqual(transport.sent, [{ command: 'coder.input', arg: { text: 'the edited text', replaces: 'sub-7' } }]);
});
