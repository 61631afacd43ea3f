import { calls, registeredCommands, reset } from '../helpers/vscodeMock';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ChatViewProvider } from '../../src/chatView';
import { Commands } from '../../src/commands';
import { PRESETS, SERVER_KEYS, SERVER_PATH_KEY } from '../../src/config';
import { Controller } from '../../src/controller';
import { EditReviews } from '../../src/review';
import { registerTaskCommands, TaskTreeProvider } from '../../src/taskView';
import { FakeTransport } from '../helpers/fakeTransport';

interface Manifest {
  main: string;
  capabilities?: { untrustedWorkspaces?: { supported: boolean | string; restrictedConfigurations?: string[] } };
  contributes: {
    commands: Array<{ command: string }>;
    configuration: { properties: Record<string, { enum?: string[]; type?: string; default?: unknown; scope?: string }> };
    views: Record<string, Array<{ id: string; type?: string }>>;
    viewsContainers: { activitybar: Array<{ id: string }> };
  };
}
const root = join(__dirname, '..', '..', '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Manifest;

test('every contributed command is registered, and none uses the server\'s coder.* ids', () => {
  reset();
  const controller = new Controller(new FakeTransport());
  new Commands(controller, {} as ChatViewProvider).register();
  const noop = async (): Promise<void> => undefined;
  registerTaskCommands(controller, new TaskTreeProvider(controller), { submit: noop, interrupt: noop, openFile: noop });
  new EditReviews().register();
  const registered = [...registeredCommands];
  const contributed = manifest.contributes.commands.map((c) => c.command);
  assert.deepEqual([...registered].sort(), [...contributed].sort());
  assert.ok(contributed.every((id) => id.startsWith('coderLs.')));
  assert.equal(calls.length, 0);
});

test('every forwarded server key is a contributed setting; permissions enum matches', () => {
  const props = manifest.contributes.configuration.properties;
  for (const key of SERVER_KEYS) assert.ok(props[`coder.${key}`], `missing setting coder.${key}`);
  assert.ok(props['coder.server.path'] && props['coder.server.args']);
  assert.deepEqual([props['coder.saveEditedFiles']?.type, props['coder.saveEditedFiles']?.default], ['boolean', true]);
  assert.ok(!(SERVER_KEYS as readonly string[]).includes('saveEditedFiles'));
  assert.deepEqual(props['coder.permissions'].enum, [...PRESETS]);
});

test('the chat view is a webview in its own activity-bar container', () => {
  const container = manifest.contributes.viewsContainers.activitybar[0].id;
  assert.deepEqual(manifest.contributes.views[container], [
    { type: 'webview', id: 'coderLs.chat', name: 'Chat' },
    { id: 'coderLs.tasks', name: 'Tasks' },
  ]);
  assert.equal(manifest.main, './dist/extension.js');
});

test('"Open Settings" targets a contributed key; the server command is per machine and not taken from untrusted folders', () => {
  const props = manifest.contributes.configuration.properties;
  assert.ok(props[SERVER_PATH_KEY], `${SERVER_PATH_KEY} is not a contributed setting`);
  assert.equal(props[SERVER_PATH_KEY].scope, 'machine-overridable');
  assert.equal(props['coder.server.args'].scope, 'machine-overridable');
  const restricted = manifest.capabilities?.untrustedWorkspaces?.restrictedConfigurations ?? [];
  assert.deepEqual([...restricted].sort(), ['coder.server.args', SERVER_PATH_KEY]);
  const src = readFileSync(join(root, 'src', 'client.ts'), 'utf8');
  assert.match(src, /executeCommand\('workbench\.action\.openSettings', SERVER_PATH_KEY\)/);
});

test('settings that widen what runs unasked cannot come from a folder\'s .vscode/settings.json', () => {
  // `machine` scope: VS Code takes them from user (or remote machine) settings only, so a
  // cloned repository cannot say "yolo", a scripted provider or a verify command (issue 16).
  const props = manifest.contributes.configuration.properties;
  for (const key of ['coder.permissions', 'coder.provider', 'coder.workflow.verifyCommands']) {
    assert.equal(props[key].scope, 'machine', key);
  }
});
