// Issue 34's lens step: the result of a command VS Code runs itself (a code lens's revert, a
// code action, a `command:` link) is shown in the chat without taking the focus from the
// editor. VS Code cancels an editor's pending code-lens update when the editor loses focus
// and asks again only when it gets it back: a chat that took the focus right after the
// server's `workspace/codeLens/refresh` left the reverted hunk's lens drawn.
import { calls, reset, vscode } from '../helpers/vscodeMock';
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { ChatViewProvider } from '../../src/chatView';
import { Commands } from '../../src/commands';
import { Controller } from '../../src/controller';
import { FakeTransport, result } from '../helpers/fakeTransport';

beforeEach(() => {
  reset();
  (vscode.window as { activeTextEditor: unknown }).activeTextEditor = undefined;
});

/** The chat view; `resolved`: VS Code made its webview (the chat was shown once). */
function chatView(resolved: boolean) {
  const controller = new Controller(new FakeTransport());
  const chat = new ChatViewProvider({ path: '/ext' } as never, controller, {
    submit: async () => undefined,
    interrupt: async () => undefined,
    stopAgent: async () => undefined,
    newSession: async () => undefined,
  });
  const shown: unknown[] = [];
  const posted: unknown[] = [];
  const view = {
    visible: false,
    show: (preserveFocus?: boolean) => shown.push(preserveFocus),
    webview: {
      options: {},
      html: '',
      cspSource: 'vscode-resource:',
      asWebviewUri: (u: unknown) => u,
      onDidReceiveMessage: () => ({ dispose() {} }),
      postMessage: async (m: unknown) => (posted.push(m), true),
    },
    onDidDispose: () => ({ dispose() {} }),
    onDidChangeVisibility: () => ({ dispose() {} }),
  };
  if (resolved) chat.resolveWebviewView(view as never);
  return { chat, controller, shown, posted };
}

const focusCommands = () => calls.filter((c) => c.fn === 'executeCommand' && String(c.args[0]).endsWith('.focus'));

test('the result of a code lens click is shown in the chat, and the focus stays in the editor', async () => {
  const { chat, controller, shown, posted } = chatView(true);
  const commands = new Commands(controller, chat);
  commands.show(result({ mode: 'command', reply: 'Reverted line 2 of shapes.py (Coder: "fix area in shapes.py").' }), true);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(shown, [true], 'the chat view shown with preserveFocus');
  assert.deepEqual(focusCommands(), [], 'no coderLs.chat.focus (it takes the focus from the editor)');
  assert.ok(!posted.some((m) => (m as { type?: string }).type === 'focus'), 'the chat input does not take the focus');
  assert.equal(controller.transcript.entries.at(-1)?.kind, 'reply');
});

test('the chat not made yet: its focus command makes it, and the focus goes back to the editor', async () => {
  const { chat } = chatView(false);
  const editor = { document: { uri: 'file:///ws/shapes.py' }, viewColumn: 1 };
  (vscode.window as { activeTextEditor: unknown }).activeTextEditor = editor;
  await chat.reveal({ preserveFocus: true });
  assert.deepEqual(focusCommands().map((c) => c.args[0]), ['coderLs.chat.focus']);
  const back = calls.filter((c) => c.fn === 'showTextDocument');
  assert.deepEqual(back.map((c) => c.args), [[editor.document, { viewColumn: 1, preserveFocus: false }]]);
});

test('what the user asks for in the chat still takes the focus there', async () => {
  const { chat, shown, posted } = chatView(true);
  await chat.reveal();
  assert.deepEqual(shown, []);
  assert.deepEqual(focusCommands().map((c) => c.args[0]), ['coderLs.chat.focus']);
  assert.ok(posted.some((m) => (m as { type?: string }).type === 'focus'));
});
