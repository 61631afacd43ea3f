import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { checkVersions, isServerMismatchMessage, MISMATCH_PREFIX, PROTOCOL_VERSION, serverProtocol } from '../../src/version';

test('the server\'s announced protocol is read from capabilities.experimental.coder; none means 1.0', () => {
  assert.equal(serverProtocol({ capabilities: { experimental: { coder: { protocolVersion: '2.3' } } } }), '2.3');
  assert.equal(serverProtocol({ capabilities: {} }), '1.0');
  assert.equal(serverProtocol({ capabilities: { experimental: { coder: { protocolVersion: 2 } } } }), '1.0');
  assert.equal(serverProtocol(undefined), '1.0');
});

test('same MAJOR: nothing to say, whatever the MINOR', () => {
  assert.equal(checkVersions(PROTOCOL_VERSION, '/x/coder-ls'), undefined);
  assert.equal(checkVersions(`${PROTOCOL_VERSION.split('.')[0]}.99`, '/x/coder-ls'), undefined);
});

test('an older server: update coder-ls, named with its path and both versions', () => {
  const m = checkVersions('0.4', '/home/me/.local/bin/coder-ls', '0.0.9');
  assert.equal(m?.update, 'server');
  assert.match(m!.message, /coder-ls 0\.0\.9 \(\/home\/me\/\.local\/bin\/coder-ls\) speaks protocol 0\.4/);
  assert.match(m!.message, new RegExp(`this Coder extension speaks ${PROTOCOL_VERSION.replace('.', '\\.')}`));
  assert.match(m!.message, /update coder-ls \(`pipx upgrade coder-ls` or `uv tool upgrade coder-ls`\)/);
});

test('a newer server: update the extension', () => {
  const m = checkVersions('9.0', 'coder-ls');
  assert.equal(m?.update, 'extension');
  assert.match(m!.message, /update the Coder extension/);
});

test('the server\'s own copy of the mismatch is recognised (and dropped by plainServerMessages); its other messages are not', () => {
  assert.ok(isServerMismatchMessage(`${MISMATCH_PREFIX} coder-ls 9 speaks protocol 9.0 ...`));
  assert.ok(!isServerMismatchMessage('bad config: coder-ls protocol mismatch: quoted'));
  const src = readFileSync(join(__dirname, '..', '..', '..', 'src', 'plainMessage.ts'), 'utf8');
  assert.match(src, /if \(!isServerMismatchMessage\(p\.message\)\) void showFor/);
});

test('the extension sends its protocolVersion and the Python contract says the same MAJOR', () => {
  const src = readFileSync(join(__dirname, '..', '..', '..', 'src', 'client.ts'), 'utf8');
  assert.match(src, /protocolVersion: PROTOCOL_VERSION/);
  const py = readFileSync(join(__dirname, '..', '..', '..', '..', '..', 'coder_ls', '__init__.py'), 'utf8');
  assert.equal(/PROTOCOL_VERSION = "(\d+)\.\d+"/.exec(py)?.[1], PROTOCOL_VERSION.split('.')[0]);
});
