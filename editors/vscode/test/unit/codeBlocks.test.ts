// Issue 38, point 5: code blocks in answers with Copy and Insert (at the cursor).
import { calls, reset, vscode } from '../helpers/vscodeMock';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChatViewProvider } from '../../src/chatView';
import { Controller } from '../../src/controller';
import { renderMarkdown } from '../../src/markdown';
import type { FromWebview } from '../../src/webview/messages';
import { FakeTransport } from '../helpers/fakeTransport';

const CODE = 'def add(a, b):\n    return a + b  # <fixed>';

test('a fenced code block has Copy and Insert, above the code as it was written (coloured, escaped)', () => {
  const html = renderMarkdown(`Fixed:\n\n\`\`\`python\n${CODE}\n\`\`\`\n`);
  assert.match(html, /<div class="code-block"><div class="code-tools"><span class="code-lang">python<\/span>/);
  assert.match(html, /<button class="code-action" data-code-action="copy"[^>]*>Copy<\/button>/);
  assert.match(html, /<button class="code-action" data-code-action="insert"[^>]*>Insert<\/button>/);
  const code = /<code class="language-python">([\s\S]*?)<\/code>/.exec(html)?.[1] ?? '';
  assert.ok(code.includes('<span class="tok-keyword">def</span>'), code);
  const asText = code.replace(/<[^>]+>/g, '').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&amp;/g, '&');
  assert.equal(asText, CODE, 'what Copy takes (the code element\'s text) is the code itself');
  assert.ok(!html.includes('<fixed>'), 'escaped');
});

/** The chat view with a fake webview: what it posts, and a way to send it messages. */
function chatView() {
  const controller = new Controller(new FakeTransport());
  const chat = new ChatViewProvider({ path: '/ext' } as never, controller, {
    submit: async () => undefined,
    interrupt: async () => undefined,
    stopAgent: async () => undefined,
    newSession: async () => undefined,
  });
  let receive: (msg: FromWebview) => Promise<void> = async () => undefined;
  const view = {
    visible: true,
    webview: {
      options: {},
      html: '',
      cspSource: 'vscode-resource:',
      asWebviewUri: (u: unknown) => u,
      onDidReceiveMessage: (fn: (msg: FromWebview) => Promise<void>) => ((receive = fn), { dispose() {} }),
      postMessage: async () => true,
    },
    onDidDispose: () => ({ dispose() {} }),
    onDidChangeVisibility: () => ({ dispose() {} }),
  };
  chat.resolveWebviewView(view as never);
  return { chat, send: (msg: FromWebview) => receive(msg), view };
}

test("Copy puts the code on VS Code's clipboard; Insert puts it at the cursor of the editor (over the selection)", async () => {
  reset();
  const { send, view } = chatView();
  assert.match(view.webview.html, /<div id="review" hidden><\/div>/, 'the chat has room for a waiting review');
  await send({ type: 'code', action: 'copy', text: CODE });
  assert.deepEqual(calls.find((c) => c.fn === 'clipboard.writeText')?.args, [CODE]);
  const replaced: Array<[unknown, string]> = [];
  const editor = {
    document: { uri: 'file:///ws/app.py' },
    viewColumn: 1,
    selections: ['sel-1', 'sel-2'],
    edit: async (fn: (b: { replace(at: unknown, text: string): void }) => void) => {
      fn({ replace: (at, text) => replaced.push([at, text]) });
      return true;
    },
  };
  (vscode.window as { activeTextEditor: unknown }).activeTextEditor = editor;
  await send({ type: 'code', action: 'insert', text: CODE });
  assert.deepEqual(replaced, [['sel-1', CODE], ['sel-2', CODE]]);
  (vscode.window as { activeTextEditor: unknown }).activeTextEditor = undefined;
  await send({ type: 'code', action: 'insert', text: CODE });
  assert.ok(calls.some((c) => c.fn === 'showInformationMessage' && /Open a file/.test(String(c.args[0]))), 'no editor: it says so');
});
