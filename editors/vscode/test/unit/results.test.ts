import assert from 'node:assert/strict';
import { test } from 'node:test';
import { catalogOf, commandItems, modelItems, presentResult, sessionItems, summarize } from '../../src/results';
import { result } from '../helpers/fakeTransport';

test('mode error → error popup with error.message', () => {
  const r = result({ mode: 'error', status: 'failed', reply: 'x', error: { code: 'unknownCommand', message: 'Unknown command /hlep. Did you mean /help?' } });
  assert.deepEqual(presentResult(r), { kind: 'error', message: 'Unknown command /hlep. Did you mean /help?' });
  assert.deepEqual(presentResult(result({ mode: 'error', reply: 'fallback' })), { kind: 'error', message: 'fallback' });
});

test('other modes → transcript, with a one-line summary', () => {
  assert.equal(presentResult(result({ mode: 'command', reply: 'Commands:\n/help' })).kind, 'transcript');
  assert.equal(summarize(result({ mode: 'raw', command: 'echo hi', exitCode: 0 })), '$ echo hi → exit 0');
  assert.equal(summarize(result({ mode: 'raw', command: 'sleep 30', exitCode: null, status: 'cancelled' })), '$ sleep 30 → cancelled');
  assert.equal(summarize(result({ mode: 'nl', reply: '\nFirst line\nsecond' })), 'First line');
});

test('data payloads → catalog and quick-pick items', () => {
  const commands = [{ name: 'help', description: 'Help', argumentHint: '', kind: 'local' as const, source: 'builtin' as const }];
  assert.deepEqual(catalogOf(result({ data: { kind: 'commands', commands } })), commands);
  assert.deepEqual(catalogOf(result({ data: { kind: 'model', current: 'a', provider: 'p', models: [] } })), []);
  assert.equal(commandItems(commands)[0].label, '/help');

  const sessions = result({
    data: {
      kind: 'sessions',
      timezone: 'Asia/Shanghai',
      sessions: [
        { id: 'abc123', title: 'Fix tests', updatedAt: '2026-01-01T10:00:00+08:00', updated: '2026-01-01 10:00 (Asia/Shanghai)', messageCount: 4, current: true },
        { id: 'def456', title: '', updatedAt: 'x', updated: '', messageCount: 0 },
      ],
    },
  });
  const items = sessionItems(sessions);
  assert.deepEqual(items.map((i) => i.value), ['abc123', 'def456']);
  assert.match(items[0].label, /Fix tests/);
  assert.match(items[0].description ?? '', /2026-01-01 10:00 \(Asia\/Shanghai\) · 4 messages/);
  assert.equal(items[1].label, '(untitled)');

  const models = modelItems(result({ data: { kind: 'model', current: 'b', provider: 'p', models: [{ name: 'a', provider: 'p' }, { name: 'b', provider: 'p' }] } }));
  assert.deepEqual(models.map((m) => m.value), ['a', 'b']);
  assert.match(models[1].label, /check/);
  assert.deepEqual(sessionItems(result({ data: null })), []);
});
