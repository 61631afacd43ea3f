/**
 * Integration: the REAL coder-ls over stdio, driven through the same JSON-RPC
 * stack as vscode-languageclient (vscode-languageserver-protocol / vscode-jsonrpc),
 * with the extension's Controller + Transcript model on top.
 *
 * Server command: $CODER_LS_CMD (e.g. "python -m coder_ls"), else `coder-ls` on PATH.
 * Skipped only when that executable cannot be found at all (unless CODER_LS_REQUIRED=1).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, isAbsolute, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import {
  createMessageConnection,
  ExecuteCommandRequest,
  InitializeRequest,
  type InitializeResult,
  type MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-languageserver-protocol/node';
import { buildServerConfig } from '../../src/config';
import { Controller } from '../../src/controller';
import type { CoderEvent, CommandResult } from '../../src/protocol';
import { slashMatches } from '../../src/slash';
import { renderEntry } from '../../src/webview/render';

const [cmd, ...cmdArgs] = (process.env.CODER_LS_CMD ?? 'coder-ls').trim().split(/\s+/);

function findExecutable(name: string): string | null {
  const candidates = isAbsolute(name) || name.includes('/') ? [name] : (process.env.PATH ?? '').split(delimiter).map((d) => join(d, name));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      /* next */
    }
  }
  return null;
}

/** Set CODER_LS_REQUIRED=1 in CI to fail (not skip) when the server is missing. */
const skip =
  findExecutable(cmd) || process.env.CODER_LS_REQUIRED === '1' ? false : `server command "${cmd}" not found (set CODER_LS_CMD)`;

/** What a user might have in settings.json; mapped exactly like the extension does. */
const USER_SETTINGS: Record<string, unknown> = {
  permissions: 'auto-edit',
  'shell.timeoutSeconds': 60,
  'workflow.autoVerifyAfterEdit': false,
};

function fakeSettings(values: Record<string, unknown>): Parameters<typeof buildServerConfig>[0] {
  return { inspect: <T>(key: string) => ({ globalValue: values[key] as T | undefined }) };
}

const SCRIPT = {
  turns: [
    {
      thinking: 'Plan it.',
      text: 'I will make a todo and write the file.',
      toolCalls: [
        { name: 'todoWrite', input: { todos: [{ content: 'write hello.txt', status: 'in_progress' }] } },
        { name: 'write', input: { path: 'hello.txt', content: 'hi\n' } },
      ],
    },
    { text: 'Done: **hello.txt** written.' },
    // the subagent test: the main agent starts one, whose slow reply is stopped
    { text: 'Asking a helper.', toolCalls: [{ id: 'task-call-1', name: 'task', input: { prompt: 'survey the repo slowly' } }] },
    { text: 'surveying the repo one file at a time', delayMs: 3000 },
    { text: 'The helper was stopped; going on alone.' },
    // the /task test: a plan of two chained steps, each step's answer, the report
    {
      toolCalls: [
        {
          name: 'plan',
          input: {
            steps: [
              { id: 'scan', title: 'Scan the modules', prompt: 'list the modules' },
              { id: 'note', title: 'Write the notes', prompt: 'write notes', dependsOn: ['scan'] },
            ],
          },
        },
      ],
    },
    { text: 'Planned.' },
    { text: 'One module: README.md.' },
    { text: 'Notes written.' },
    { text: '# Report\nBoth steps done.' },
  ],
};

interface Progress {
  token: string | number;
  value: { kind: string; cancellable?: boolean; message?: string; title?: string };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `promise`, or `fallback()` after `ms` (the timer never keeps the process alive). */
async function within<T, F>(promise: Promise<T>, ms: number, fallback: () => F): Promise<T | F> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<F>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(fallback());
      } catch (err) {
        reject(err);
      }
    }, ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function waitFor(pred: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

describe('coder-ls over stdio', { skip, timeout: 120_000 }, () => {
  let dir = '';
  let proc: ChildProcess;
  let conn: MessageConnection;
  let init: InitializeResult;
  let stderr = '';
  const events: CoderEvent[] = [];
  const progressCreated: Array<string | number> = [];
  const progress: Progress[] = [];
  let controller: Controller;

  const exec = (command: string, arg: Record<string, unknown> = {}): Promise<CommandResult> =>
    controller.run(command, arg);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'coder-ls-vscode-'));
    const ws = join(dir, 'ws');
    mkdirSync(ws);
    mkdirSync(join(dir, 'home'));
    writeFileSync(join(ws, 'README.md'), '# test workspace\n');
    const git = (...args: string[]): void => void execFileSync('git', args, { cwd: ws, stdio: 'ignore' });
    git('init', '-q');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'add', '.');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'init');
    // An offline agent turn: the server's `scripted` provider replays these turns.
    // The user's config (XDG_CONFIG_HOME below): an untrusted workspace cannot choose the provider.
    mkdirSync(join(ws, '.coder'));
    mkdirSync(join(dir, 'home', '.config', 'coder'), { recursive: true });
    writeFileSync(
      join(dir, 'home', '.config', 'coder', 'config.json'),
      JSON.stringify({ provider: 'scripted', scriptedFile: join(ws, 'script.json') }),
    );
    writeFileSync(join(ws, 'script.json'), JSON.stringify(SCRIPT));

    proc = spawn(cmd, cmdArgs, {
      cwd: ws,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, HOME: join(dir, 'home'), XDG_CONFIG_HOME: join(dir, 'home', '.config') },
    });
    proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const spawnError = new Promise<never>((_, reject) => proc.on('error', (err) => reject(new Error(`cannot start ${cmd}: ${err.message}`))));
    proc.on('exit', (code) => {
      if (code) stderr += `\n[server exited with ${code}]`;
    });
    conn = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
    conn.onRequest('window/workDoneProgress/create', (p: { token: string | number }) => {
      progressCreated.push(p.token);
      return null;
    });
    conn.onNotification('$/progress', (p: Progress) => void progress.push(p));
    conn.onNotification('coder/event', (e: CoderEvent) => {
      events.push(e);
      controller.handleEvent(e);
    });
    conn.onRequest('window/showMessageRequest', () => null);
    conn.onRequest('workspace/configuration', (p: { items: unknown[] }) => p.items.map(() => null));
    conn.onRequest('client/registerCapability', () => null);
    conn.onRequest('workspace/applyEdit', () => ({ applied: false, failureReason: 'test client' }));
    conn.onNotification('window/logMessage', () => undefined);
    conn.onNotification('window/showMessage', () => undefined);
    conn.listen();

    controller = new Controller({
      executeCommand: (command, arg) => conn.sendRequest(ExecuteCommandRequest.type, { command, arguments: [arg] }),
    });

    const rootUri = pathToFileURL(ws).href;
    try {
      init = await within(
        Promise.race([spawnError, conn.sendRequest(InitializeRequest.type, {
          processId: process.pid,
          rootUri,
          workspaceFolders: [{ uri: rootUri, name: 'ws' }],
          capabilities: {
            window: { workDoneProgress: true, showMessage: {} },
            workspace: { configuration: true, workspaceFolders: true, applyEdit: false },
          },
          initializationOptions: buildServerConfig(fakeSettings(USER_SETTINGS)),
        })]),
        20_000,
        () => {
          throw new Error('no initialize response in 20s');
        },
      );
    } catch (err) {
      throw new Error(`initialize failed: ${String(err)}\n--- server stderr ---\n${stderr.slice(-4000)}`);
    }
    await conn.sendNotification('initialized', {});
  });

  after(async () => {
    try {
      await within(conn.sendRequest('shutdown'), 3000, () => null);
      await conn.sendNotification('exit');
    } catch {
      /* already gone */
    }
    await sleep(200);
    if (proc.exitCode === null) proc.kill('SIGKILL');
    conn?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  test('initialize advertises the contract commands', () => {
    const ids = init.capabilities.executeCommandProvider?.commands ?? [];
    for (const id of ['coder.input', 'coder.shell', 'coder.interrupt', 'coder.listCommands', 'coder.help']) {
      assert.ok(ids.includes(id), `executeCommandProvider lacks ${id}: ${ids.join(', ')}`);
    }
  });

  test('coder.shell echo hello → raw result, shellOutput events in the transcript, progress', async () => {
    const before = events.length;
    const created = progressCreated.length;
    const r = await exec('coder.shell', { command: 'echo hello' });
    assert.equal(r.mode, 'raw', JSON.stringify(r));
    assert.equal(r.status, 'completed');
    assert.match(r.rawOutput ?? '', /hello/);
    assert.equal(r.exitCode, 0);
    assert.ok(r.sessionId && r.submissionId);
    await sleep(150);
    const mine = events.slice(before).filter((e) => e.submissionId === r.submissionId);
    const chunks = mine.filter((e) => e.type === 'shellOutput').map((e) => (e as { chunk: string }).chunk);
    assert.match(chunks.join(''), /hello/, `shellOutput events: ${JSON.stringify(mine)}`);
    const shell = controller.transcript.entries.find((e) => e.kind === 'shell' && e.submissionId === r.submissionId);
    assert.ok(shell && shell.kind === 'shell' && /hello/.test(shell.output) && shell.done);
    assert.equal(controller.sessionId, r.sessionId);

    assert.ok(progressCreated.length > created, 'server created a work-done progress token');
    const token = progressCreated[progressCreated.length - 1];
    const kinds = progress.filter((p) => p.token === token).map((p) => p.value);
    assert.equal(kinds[0]?.kind, 'begin');
    assert.equal(kinds[0]?.cancellable, true);
    assert.equal(kinds[kinds.length - 1]?.kind, 'end');
  });

  test('coder.listCommands → catalog for slash completion', async () => {
    const catalog = await controller.refreshCatalog();
    const names = catalog.map((c) => c.name.replace(/^\//, ''));
    assert.ok(names.includes('help'), `catalog: ${names.join(', ')}`);
    for (const c of catalog) {
      assert.equal(typeof c.description, 'string');
      assert.ok(['local', 'prompt', 'agent'].includes(c.kind), c.kind);
      assert.ok(['builtin', 'workspace', 'user', 'skill', 'bundled', 'managed', 'plugin', 'mcp'].includes(c.source), c.source);
    }
    assert.ok(slashMatches('/he', catalog).some((m) => m.command.name.replace(/^\//, '') === 'help'));
  });

  test('slash commands → mode "command", reply in the transcript', async () => {
    const viaInput = await exec('coder.input', { text: '/help' });
    assert.equal(viaInput.mode, 'command', JSON.stringify(viaInput));
    assert.equal(viaInput.status, 'completed');
    assert.ok(viaInput.reply.length > 0);
    const viaId = await exec('coder.help', {});
    assert.equal(viaId.mode, 'command');
    assert.ok(controller.transcript.entries.some((e) => e.kind === 'reply' && e.submissionId === viaId.submissionId));
  });

  test('an unknown slash command → mode "error" naming the closest command', async () => {
    const r = await exec('coder.input', { text: '/hlep' });
    assert.equal(r.mode, 'error', JSON.stringify(r));
    assert.equal(r.status, 'failed');
    assert.match(r.error?.message ?? '', /help/);
  });

  test('events carry ids and a seq that rises by one per session', () => {
    assert.ok(events.length > 0);
    const bySession = new Map<string, number[]>();
    for (const e of events) {
      assert.equal(typeof e.type, 'string');
      assert.ok(e.sessionId, `event without sessionId: ${JSON.stringify(e)}`);
      bySession.set(e.sessionId, [...(bySession.get(e.sessionId) ?? []), e.seq]);
    }
    for (const [sid, seqs] of bySession) {
      for (let i = 1; i < seqs.length; i++) assert.equal(seqs[i], seqs[i - 1] + 1, `session ${sid} seqs ${seqs.join(',')}`);
    }
  });

  test('an agent turn (scripted provider) streams into the transcript model', async () => {
    const r = await controller.submit('write hello');
    assert.equal(r.mode, 'nl', JSON.stringify(r));
    assert.equal(r.status, 'completed');
    assert.equal(r.reply, 'Done: **hello.txt** written.');
    const mine = controller.transcript.entries.filter((e) => e.submissionId === r.submissionId);
    assert.deepEqual(
      mine.map((e) => e.kind),
      ['user', 'reasoning', 'assistant', 'tool', 'tool', 'assistant'],
      JSON.stringify(mine),
    );
    const [first, last] = mine.filter((e) => e.kind === 'assistant') as Array<{ text: string; done: boolean }>;
    assert.equal(first.text, 'I will make a todo and write the file.', 'deltas merged into one entry');
    assert.equal(last.text, 'Done: **hello.txt** written.');
    assert.ok(first.done && last.done);
    const tools = mine.filter((e) => e.kind === 'tool') as Array<{
      tool: string; done: boolean; isError: boolean; output: string; edits?: Array<{ uri: string; applied: boolean }>;
    }>;
    assert.deepEqual(tools.map((t) => [t.tool, t.done, t.isError]), [['todoWrite', true, false], ['write', true, false]]);
    // the edit belongs to the write call that made it: one sentence, one diff
    const edits = tools[1].edits ?? [];
    assert.ok(edits.length === 1 && edits[0].applied && edits[0].uri.endsWith('/hello.txt'), JSON.stringify(tools[1]));
    assert.deepEqual(controller.transcript.state.todos.map((t) => [t.content, t.status]), [['write hello.txt', 'in_progress']]);
    assert.ok((controller.transcript.state.context?.usedTokens ?? 0) > 0, 'contextUsage reached the model');
  });

  test('configuration: initializationOptions applied, didChangeConfiguration {settings: {coder}} too', async () => {
    const before = await exec('coder.permissions', {});
    assert.equal((before.data as { preset?: string } | null)?.preset, 'auto-edit', JSON.stringify(before.data));
    await conn.sendNotification('workspace/didChangeConfiguration', { settings: { coder: buildServerConfig(fakeSettings({ permissions: 'strict' })) } });
    await sleep(200);
    const afterChange = await exec('coder.permissions', {});
    assert.equal((afterChange.data as { preset?: string } | null)?.preset, 'strict');
  });

  test('coder.interrupt cancels a running sleep 30 quickly', async () => {
    const created = progressCreated.length;
    const started = Date.now();
    let settled: CommandResult | undefined;
    const sleeping = exec('coder.shell', { command: 'sleep 30' }).then((r) => (settled = r));
    await waitFor(() => progressCreated.length > created || !!settled, 5000, 'the sleep to start').catch(() => undefined);
    await sleep(500);
    assert.equal(settled, undefined, `sleep answered before the interrupt: ${JSON.stringify(settled)}`);
    const interrupted = await controller.interrupt();
    assert.notEqual(interrupted.mode, 'error', JSON.stringify(interrupted));
    const r = await within(sleeping, 8000, () => null);
    assert.ok(r, 'the sleep request did not answer within 8s of coder.interrupt');
    assert.equal(r.status, 'cancelled', JSON.stringify(r));
    assert.ok(Date.now() - started < 15_000);
    assert.ok(controller.transcript.entries.some((e) => e.kind === 'notice' && /stopped/i.test(e.text)));
    assert.equal(controller.busy, false);
    const after = await exec('coder.shell', { command: 'echo still-alive' });
    assert.match(after.rawOutput ?? '', /still-alive/, 'the session shell works after an interrupt');
  });

  test('the progress Cancel button (window/workDoneProgress/cancel) cancels too', async () => {
    const created = progressCreated.length;
    const sleeping = exec('coder.shell', { command: 'sleep 30' });
    await waitFor(() => progressCreated.length > created, 5000, 'a progress token for the sleep');
    const token = progressCreated[progressCreated.length - 1];
    await waitFor(() => progress.some((p) => p.token === token && p.value.kind === 'begin'), 5000, 'progress begin');
    await sleep(300);
    await conn.sendNotification('window/workDoneProgress/cancel', { token });
    const r = await within(sleeping, 8000, () => null);
    assert.ok(r, 'the sleep request did not answer within 8s of the progress cancel');
    assert.equal(r.status, 'cancelled', JSON.stringify(r));
    await waitFor(() => progress.some((p) => p.token === token && p.value.kind === 'end'), 3000, 'progress end');
  });
  test("the extension's Cancel notification: progress on our own token, Cancel → coder.interrupt → \"cancelled\"", async () => {
    const created = progressCreated.length;
    let n = 0;
    const mine = new Controller({
      // like ClientHost: our own workDoneToken, its $/progress messages to the notification
      executeCommand: async (command, arg, onProgress) => {
        const token = `coder.vscode/test-${++n}`;
        const seen = progress.length;
        const poll = setInterval(() => {
          for (const p of progress.slice(seen)) if (p.token === token && p.value.message) onProgress?.(p.value.message);
        }, 50);
        try {
          return await conn.sendRequest(ExecuteCommandRequest.type, { command, arguments: [arg], workDoneToken: token });
        } finally {
          clearInterval(poll);
        }
      },
    });
    mine.transcript.state.sessionId = controller.sessionId;
    let cancel: () => void = () => undefined;
    const messages: string[] = [];
    mine.progressUi = (_title, work) => {
      cancel = () => void mine.interrupt();
      return work({ report: (m) => messages.push(m) });
    };
    const running = mine.submit('!sleep 30');
    await waitFor(() => progress.some((p) => String(p.token).startsWith('coder.vscode/test-') && p.value.kind === 'begin'), 5000, 'progress on our token');
    await sleep(300);
    cancel();
    const r = await within(running, 8000, () => null);
    assert.ok(r, 'Cancel did not stop the sleep within 8s');
    assert.equal(r.status, 'cancelled', JSON.stringify(r));
    assert.equal(progressCreated.length, created, 'the server created its own token (a status-bar spinner in VS Code)');
    const shell = mine.transcript.entries.find((e) => e.kind === 'shell');
    assert.ok(shell && shell.kind === 'shell' && shell.cancelled, JSON.stringify(shell));
    assert.match(renderEntry(shell), />cancelled</);
    assert.ok(messages.length > 0, 'no progress message reached the notification');
  });

  test("a subagent shows nested under its task call; its own Stop ends it while the turn goes on", async () => {
    const running = controller.submit('ask a helper');
    await waitFor(() => controller.transcript.entries.some((e) => e.kind === 'subagent'), 15000, 'the subagent entry');
    const entries = (): typeof controller.transcript.entries => controller.transcript.entries;
    const at = entries().findIndex((e) => e.kind === 'subagent');
    const sub = entries()[at];
    assert.ok(sub.kind === 'subagent');
    const parent = entries()[at - 1];
    assert.ok(parent.kind === 'tool' && parent.tool === 'task' && parent.callId === sub.parentCallId, JSON.stringify(parent));
    assert.equal(sub.agent, 'general');
    assert.equal(sub.prompt, 'survey the repo slowly');
    assert.match(renderEntry(sub), new RegExp(`data-stop-agent="${sub.agentId}"`));
    const stopped = await controller.stopAgent(sub.agentId);
    assert.equal(stopped.status, 'completed', JSON.stringify(stopped));
    assert.deepEqual((stopped.data as { cancelledAgents?: string[] }).cancelledAgents, [sub.agentId]);
    const r = await within(running, 10000, () => null);
    assert.ok(r, 'the turn did not go on after the Stop');
    assert.equal(r.status, 'completed', JSON.stringify(r));
    assert.equal(r.reply, 'The helper was stopped; going on alone.');
    const after = entries().find((e) => e.kind === 'subagent' && e.agentId === sub.agentId);
    assert.ok(after && after.kind === 'subagent' && after.status === 'cancelled', JSON.stringify(after));
    assert.ok(!renderEntry(after).includes('data-stop-agent'), 'no Stop once it ended');
    const task = entries().find((e) => e.kind === 'tool' && e.callId === sub.parentCallId);
    assert.ok(task && task.kind === 'tool' && /cancelled by the user/.test(task.output), JSON.stringify(task));
    const main = entries().filter((e) => e.kind === 'assistant' && e.submissionId === r.submissionId).map((e) => (e as { text: string }).text);
    assert.ok(!main.join(' ').includes('surveying'), "the subagent's text stays out of the main reply");
  });

  test('a /task fills the task board from its events and results: steps, states, percentage, report', async () => {
    const r = await within(controller.submit('/task document the repo'), 30000, () => null);
    assert.ok(r, 'the task did not finish in 30s');
    assert.equal(r.status, 'completed', JSON.stringify(r));
    const taskId = (r.data as { id?: string }).id ?? '';
    await waitFor(() => controller.tasks.get(taskId)?.steps.length === 2, 5000, 'the steps of the task');
    const t = controller.tasks.get(taskId)!;
    assert.deepEqual(
      [t.status, t.completed, t.total, t.percentage, t.steps.map((s) => [s.title, s.status])],
      ['completed', 2, 2, 100, [['Scan the modules', 'completed'], ['Write the notes', 'completed']]],
    );
    assert.ok(t.report?.endsWith('report.md'), JSON.stringify(t));
    assert.ok(events.some((e) => e.type === 'taskUpdated' && (e as { percentage?: number }).percentage === 50), 'halfway reported');
    await controller.refreshTasks();
    assert.equal(controller.tasks.list()[0].id, taskId, '/task list puts the newest first');
    const subs = controller.transcript.entries.filter((e) => e.kind === 'subagent' && e.submissionId === r.submissionId);
    assert.ok(subs.length >= 3 && subs.every((e) => e.kind === 'subagent' && e.status === 'completed'), JSON.stringify(subs));
  });
});
