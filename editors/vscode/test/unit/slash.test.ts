import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CommandInfo } from '../../src/protocol';
import { parseSlash, slashMatches } from '../../src/slash';

const cmd = (name: string): CommandInfo => ({ name, description: `${name} it`, argumentHint: '', kind: 'local', source: 'builtin' });
const catalog = ['help', 'model', 'permissions', 'new', 'clear', 'resume', 'sessions', 'diff', 'undo', 'review'].map(cmd);
const names = (input: string): string[] => slashMatches(input, catalog).map((m) => m.command.name);

test('"/" lists everything, alphabetically', () => {
  assert.equal(names('/').length, catalog.length);
  assert.deepEqual(names('/').slice(0, 3), ['clear', 'diff', 'help']);
});

test('prefix matches first, then substring matches, case-insensitive', () => {
  assert.deepEqual(names('/re'), ['resume', 'review']);
  assert.deepEqual(names('/SE'), ['sessions']);
  assert.deepEqual(names('/iew'), ['review']);
  assert.deepEqual(names('/ss'), ['permissions', 'sessions']);
  assert.deepEqual(names('/zzz'), []);
});

test('no completion for shell, prompts, or once arguments start', () => {
  assert.deepEqual(names('!ls'), []);
  assert.deepEqual(names('explain /help'), []);
  assert.deepEqual(names('/model '), []);
  assert.deepEqual(names(''), []);
});

test('accepting inserts "/name " and limit applies', () => {
  assert.equal(slashMatches('/he', catalog)[0].insertText, '/help ');
  assert.equal(slashMatches('/', catalog, 3).length, 3);
});

test('parseSlash splits name and args', () => {
  assert.deepEqual(parseSlash('/model  claude-x '), { name: 'model', args: 'claude-x' });
  assert.deepEqual(parseSlash('/help'), { name: 'help', args: '' });
  assert.equal(parseSlash('!ls'), null);
});

test('a skill for the agent only (userInvocable: false) is not offered', () => {
  const hidden: CommandInfo = { ...cmd('deploy-notes'), kind: 'prompt', source: 'skill', userInvocable: false };
  const shown: CommandInfo = { ...cmd('deploy'), kind: 'prompt', source: 'skill', userInvocable: true };
  assert.deepEqual(slashMatches('/dep', [...catalog, hidden, shown]).map((m) => m.command.name), ['deploy']);
});

test('an alias finds its command; hidden entries are never offered', () => {
  const config: CommandInfo = { ...cmd('config'), aliases: ['settings'] };
  const secret: CommandInfo = { ...cmd('secret'), hidden: true };
  const matches = slashMatches('/sett', [config, secret, cmd('sessions')]);
  assert.deepEqual(matches.map((m) => m.insertText), ['/config ']);
  assert.deepEqual(slashMatches('/sec', [config, secret]), []);
});
