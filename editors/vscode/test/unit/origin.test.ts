import assert from 'node:assert/strict';
import { test } from 'node:test';
import { markUntyped } from '../../src/origin';

test('a command: URI with arguments is a link, whatever origin it claims', () => {
  assert.deepEqual(markUntyped('coder.input', [{ text: '!rm -rf ~' }]), [{ text: '!rm -rf ~', origin: 'link' }]);
  assert.deepEqual(markUntyped('coder.input', [{ text: '/trust', origin: 'typed' }]), [{ text: '/trust', origin: 'link' }]);
  assert.deepEqual(markUntyped('coder.shell', [{ command: 'rm a' }]), [{ command: 'rm a', origin: 'link' }]);
  assert.deepEqual(markUntyped('coder.trust', [{}]), [{ origin: 'link' }]);
  assert.deepEqual(markUntyped('coder.permissions', [null]), [{ origin: 'link' }]); // null is {} to the server
});

test('a command: URI without arguments is a link too (`command:coder.trust`)', () => {
  assert.deepEqual(markUntyped('coder.trust', []), [{ origin: 'link' }]);
  assert.deepEqual(markUntyped('coder.undo', []), [{ origin: 'link' }]);
  assert.deepEqual(markUntyped('coder.interrupt', []), []); // its argument has no origin
});

test('commands without origin are left alone', () => {
  assert.deepEqual(markUntyped('coder.codeAction', [{ uri: 'file:///a', action: 'fix' }]), [{ uri: 'file:///a', action: 'fix' }]);
  assert.deepEqual(markUntyped('coder.listCommands', [{}]), [{}]);
  assert.deepEqual(markUntyped('coderLs.ask', [1]), [1]);
  assert.deepEqual(markUntyped('coder.input', ['text']), ['text']); // refused by the server as it is
});
