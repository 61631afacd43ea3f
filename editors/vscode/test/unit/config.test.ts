import { reset, setSetting, vscode } from '../helpers/vscodeMock';
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildServerConfig, didChangeParams, launchConfig, notFoundMessage, resolveServer } from '../../src/config';
import { serverConfig, serverLaunch } from '../../src/settings';

beforeEach(reset);

test('nothing set → empty initializationOptions (server defaults apply)', () => {
  assert.deepEqual(serverConfig(), {});
});

test('settings map to the nested camelCase server config, user-set keys only', () => {
  setSetting('coder.model', 'claude-opus-4');
  setSetting('coder.permissions', 'auto-edit', 'workspaceValue');
  setSetting('coder.timezone', 'Europe/Paris');
  setSetting('coder.maxSteps', 12);
  setSetting('coder.shell.timeoutSeconds', 30);
  setSetting('coder.shell.maxOutputBytes', 4096);
  setSetting('coder.workflow.autoVerifyAfterEdit', false);
  setSetting('coder.workflow.verifyCommands', ['npm test']);
  setSetting('coder.workflow.maxVerifyAttempts', 0);
  setSetting('coder.provider', 'anthropic');
  assert.deepEqual(serverConfig(), {
    model: 'claude-opus-4',
    provider: 'anthropic',
    permissions: 'auto-edit',
    timezone: 'Europe/Paris',
    maxSteps: 12,
    shell: { timeoutSeconds: 30, maxOutputBytes: 4096 },
    workflow: { autoVerifyAfterEdit: false, verifyCommands: ['npm test'], maxVerifyAttempts: 0 },
  });
});

test('coder.server.* is never sent; workspace folder value wins over user value', () => {
  setSetting('coder.server.path', '/opt/coder-ls');
  setSetting('coder.server.args', ['--log-level', 'debug']);
  setSetting('coder.permissions', 'strict', 'globalValue');
  setSetting('coder.permissions', 'yolo', 'workspaceFolderValue');
  setSetting('coder.shell.timeoutSeconds', 5);
  const cfg = buildServerConfig(vscode.workspace.getConfiguration('coder'));
  assert.deepEqual(cfg, { permissions: 'yolo', shell: { timeoutSeconds: 5 } });
  assert.deepEqual(didChangeParams(vscode.workspace.getConfiguration('coder')), { settings: { coder: cfg } });
});

test('launch config: default coder-ls on PATH, custom path and args', () => {
  assert.deepEqual(serverLaunch(), { command: 'coder-ls', args: [] });
  setSetting('coder.server.path', ' python ');
  setSetting('coder.server.args', ['-m', 'coder_ls', 7]);
  assert.deepEqual(serverLaunch(), { command: 'python', args: ['-m', 'coder_ls'] });
  assert.deepEqual(launchConfig({ inspect: <T>() => ({ globalValue: '' as unknown as T }) }), { command: 'coder-ls', args: [] });
});

test('server command: configured path, else the workspace .venv, else PATH; the error lists what was tried', () => {
  const exists = (set: string[]) => (p: string) => set.includes(p);
  // left at the default: the workspace venv wins over PATH (a login shell's PATH has no venv)
  assert.deepEqual(resolveServer('coder-ls', ['/w'], '/usr/bin:/bin', exists(['/w/.venv/bin/coder-ls', '/usr/bin/coder-ls'])), {
    command: '/w/.venv/bin/coder-ls',
    tried: ['/w/.venv/bin/coder-ls'],
  });
  assert.equal(resolveServer('', ['/w'], '/usr/bin:/bin', exists(['/bin/coder-ls'])).command, '/bin/coder-ls');
  // configured: only that (an absolute path is not looked up anywhere else)
  const abs = resolveServer('/opt/x/coder-ls', ['/w'], '/usr/bin', exists(['/w/.venv/bin/coder-ls']));
  assert.deepEqual(abs, { command: undefined, tried: ['/opt/x/coder-ls'] });
  assert.equal(resolveServer('tools/coder-ls', ['/w'], '', exists(['/w/tools/coder-ls'])).command, '/w/tools/coder-ls');
  assert.equal(resolveServer('my-coder', [], '/a:/b/', exists(['/b/my-coder'])).command, '/b/my-coder');
  const none = resolveServer('coder-ls', ['/w'], '/usr/bin:/bin', exists([]));
  assert.equal(none.command, undefined);
  const msg = notFoundMessage(none);
  for (const p of ['/w/.venv/bin/coder-ls', '/usr/bin/coder-ls', '/bin/coder-ls', 'coder.server.path']) assert.ok(msg.includes(p), msg);
});

test('server path: the user value (not the default) across other settings changes; a workspace value overrides it', () => {
  setSetting('coder.server.path', '/home/u/.venv/bin/coder-ls', 'globalValue');
  assert.equal(serverLaunch().command, '/home/u/.venv/bin/coder-ls');
  setSetting('coder.permissions', 'yolo'); // another settings change
  assert.equal(serverLaunch().command, '/home/u/.venv/bin/coder-ls');
  setSetting('coder.server.path', '/w/bin/coder-ls', 'workspaceValue');
  assert.equal(serverLaunch().command, '/w/bin/coder-ls');
});
