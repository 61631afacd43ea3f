import { answers, commandHandlers, reset } from '../helpers/vscodeMock';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Controller, TASK_REFRESH_MS } from '../../src/controller';
import { formatDuration, stepDescription, TaskBoard, taskDescription } from '../../src/tasks';
import { registerTaskCommands, TaskTreeProvider } from '../../src/taskView';
import { FakeTransport, result } from '../helpers/fakeTransport';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function status(id: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    kind: 'task',
    id,
    goal: 'Add type hints',
    status: 'running',
    steps: [
      { id: 'a', title: 'Scan modules', status: 'completed', attempts: 1, tokens: 1500 },
      { id: 'b', title: 'Annotate src/', status: 'running', attempts: 2, tokens: 0 },
      { id: 'c', title: 'Run mypy', status: 'pending', attempts: 0, tokens: 0 },
    ],
    completed: 1,
    failed: 0,
    skipped: 0,
    total: 3,
    percentage: 33,
    tokensUsed: 1500,
    budget: 500000,
    elapsedSeconds: 40,
    etaSeconds: 80,
    report: null,
    ...over,
  };
}

test('taskUpdated events keep the counts live; a status adds the steps and ETA', () => {
  const b = new TaskBoard();
  assert.equal(b.applyEvent({ type: 'taskUpdated', taskId: 't1', status: 'running', completed: 0, failed: 0, total: 3, percentage: 0, tokensUsed: 10 }), 't1');
  assert.equal(b.applyEvent({ type: 'assistantDelta', text: 'x' }), null);
  assert.equal(b.applyEvent({ type: 'taskUpdated', status: 'running' }), null, 'no taskId: ignored');
  assert.equal(taskDescription(b.list()[0]), 'running · 0/3 · 0% · 10 tokens');
  b.applyData(status('t1'));
  const t = b.list()[0];
  assert.equal(t.goal, 'Add type hints');
  assert.equal(taskDescription(t), 'running · 1/3 · 33% · 1.5k/500k tokens · ETA 1m 20s');
  assert.deepEqual(t.steps.map(stepDescription), ['completed · 1.5k tokens', 'running · attempt 2', 'pending']);
  b.applyEvent({ type: 'taskUpdated', taskId: 't1', status: 'paused', completed: 2, failed: 0, total: 3, percentage: 66, tokensUsed: 3000 });
  assert.equal(taskDescription(b.list()[0]), 'paused · 2/3 · 66% · 3.0k/500k tokens', 'no ETA once it stopped running');
});

test('the list is newest first, as the server lists it; bad data is refused', () => {
  const b = new TaskBoard();
  b.applyEvent({ type: 'taskUpdated', taskId: 'new', status: 'running', total: 1 });
  assert.ok(b.applyData({ kind: 'tasks', tasks: [status('t2'), status('t1', { status: 'completed' }), 'junk'] }));
  assert.deepEqual(b.list().map((t) => t.id), ['t2', 't1', 'new']);
  assert.equal(b.applyData({ kind: 'task' }), false);
  assert.equal(b.applyData(null), false);
  assert.equal(b.applyData({ kind: 'help', commands: [] }), false);
});

test('durations read like a person would say them', () => {
  assert.deepEqual([formatDuration(9.6), formatDuration(80), formatDuration(3725), formatDuration(null), formatDuration(-1)], [
    '10s',
    '1m 20s',
    '1h 02m',
    '',
    '',
  ]);
});

test('the controller asks once per burst of taskUpdated for the steps (/task status <id>)', async () => {
  const t = new FakeTransport((_command, arg) =>
    String(arg.text).startsWith('/task status') ? result({ mode: 'command', data: status('t1') as never }) : result(),
  );
  const c = new Controller(t);
  for (let i = 0; i < 5; i++) c.handleEvent({ sessionId: 's1', submissionId: 'x', seq: i, type: 'taskUpdated', taskId: 't1', status: 'running', total: 3, completed: 0, percentage: 0, tokensUsed: 0 });
  assert.equal(c.tasks.list()[0].steps.length, 0);
  await sleep(TASK_REFRESH_MS + 100);
  const asked = t.sent.filter((s) => s.command === 'coder.input').map((s) => s.arg.text);
  assert.deepEqual(asked, ['/task status t1']);
  assert.deepEqual(c.tasks.list()[0].steps.map((s) => s.status), ['completed', 'running', 'pending']);
  assert.equal(c.transcript.entries.length, 0, 'the look-up stays out of the transcript');
  c.dispose();
});

test('the Tasks view: tasks with their steps, icons and actions by state', async () => {
  reset();
  const t = new FakeTransport((_command, arg) =>
    arg.text === '/task list'
      ? result({ mode: 'command', data: { kind: 'tasks', tasks: [status('t2', { status: 'paused', etaSeconds: null }), status('t1', { status: 'completed', report: '.coder/tasks/t1/report.md' })] } as never })
      : result(),
  );
  const c = new Controller(t);
  const tree = new TaskTreeProvider(c);
  let fired = 0;
  tree.onDidChangeTreeData(() => fired++);
  assert.deepEqual(tree.getChildren(), [], 'the first look loads the list');
  await sleep(20);
  assert.ok(fired > 0);
  const roots = tree.getChildren();
  const items = roots.map((n) => tree.getTreeItem(n));
  assert.deepEqual(items.map((i) => i.contextValue), ['coderTask.resumable', 'coderTask.report']);
  assert.deepEqual(items.map((i) => (i.iconPath as { id: string }).id), ['debug-pause', 'pass']);
  const steps = tree.getChildren(roots[0]).map((n) => tree.getTreeItem(n));
  assert.deepEqual(steps.map((s) => [s.label, (s.iconPath as { id: string }).id]), [
    ['Scan modules', 'pass'],
    ['Annotate src/', 'sync~spin'],
    ['Run mypy', 'circle-outline'],
  ]);
  const submitted: string[] = [];
  const opened: string[] = [];
  registerTaskCommands(c, tree, {
    submit: async (text) => void submitted.push(text),
    interrupt: async () => undefined,
    openFile: async (p) => void opened.push(p),
  });
  await commandHandlers.get('coderLs.task.resume')?.(roots[0]); // the view's button: at once
  answers.warning.push('Resume');
  await commandHandlers.get('coderLs.task.resume')?.(); // from the palette: the newest resumable, asked first
  await commandHandlers.get('coderLs.task.openReport')?.(roots[1]);
  assert.deepEqual(submitted, ['/task resume t2', '/task resume t2']);
  assert.deepEqual(opened, ['.coder/tasks/t1/report.md']);

  // A `command:` link can pass an object shaped like a node, naming any task: it names
  // nothing, and resuming is asked first; a declined question submits nothing.
  const forged = { kind: 'task', task: { ...roots[0].task, id: 'not-shown' } };
  answers.warning.push(undefined);
  await commandHandlers.get('coderLs.task.resume')?.(forged);
  assert.deepEqual(submitted, ['/task resume t2', '/task resume t2']);
  answers.warning.push('Resume');
  await commandHandlers.get('coderLs.task.resume')?.(forged);
  assert.deepEqual(submitted.at(-1), '/task resume t2', 'the forged id is never used');
  await commandHandlers.get('coderLs.task.openReport')?.({ kind: 'task', task: { id: 'x', report: '/etc/passwd' } });
  assert.deepEqual(opened.at(-1), '.coder/tasks/t1/report.md', 'a forged report path is never opened');
});
