import { reset, setSetting, vscode } from '../helpers/vscodeMock';
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildServerConfig, didChangeParams, launchConfig } from '../../src/config';
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
  assert.deepEqual(launchConfig(<T>() => '' as T), { command: 'coder-ls', args: [] });
});
