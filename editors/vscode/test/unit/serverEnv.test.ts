import { calls, extensions, progresses, reset, setSetting } from '../helpers/vscodeMock';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, test } from 'node:test';
import { bundledServer, INSTALL_DOCS, serverCommand } from '../../src/bundledServer';
import { type Bundle, createEnvironment, findPython, NoSuitablePython, pipEnv, type Runner } from '../../src/serverEnv';

beforeEach(reset);

const BUNDLE: Bundle = {
  version: '0.1.0',
  protocolVersion: '1.0',
  wheel: 'coder_ls-0.1.0-py3-none-any.whl',
  deps: 'deps-cp311-linux_x86_64.tar.xz',
  python: '3.11',
  platform: 'linux-x64',
};

/** An extension folder whose server/ carries BUNDLE (empty files: the runner is scripted). */
function extensionDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'coder-ext-'));
  mkdirSync(join(dir, 'server'));
  writeFileSync(join(dir, 'server', 'bundle.json'), JSON.stringify(BUNDLE));
  writeFileSync(join(dir, 'server', BUNDLE.wheel), '');
  writeFileSync(join(dir, 'server', BUNDLE.deps), '');
  return dir;
}

/** Pythons by path (their version, or absent: not found); records every run; `venv` makes bin/coder-ls. */
function fakeSystem(pythons: Record<string, string>, fail?: string): { run: Runner; ran: string[][] } {
  const ran: string[][] = [];
  const run: Runner = async (command, args) => {
    ran.push([command, ...args]);
    if (args[0] === '-c' && args[1].includes('version_info')) {
      const v = pythons[command];
      return v ? { code: 0, stdout: `${v}\n`, stderr: '' } : { code: 127, stdout: '', stderr: 'ENOENT' };
    }
    if (fail && args.includes(fail)) return { code: 1, stdout: '', stderr: `ERROR: ${fail} went wrong` };
    if (args[0] === '-m' && args[1] === 'venv') {
      mkdirSync(join(args[2], 'bin'), { recursive: true });
      writeFileSync(join(args[2], 'bin', 'coder-ls'), '#!/bin/sh\n');
    }
    return { code: 0, stdout: '', stderr: '' };
  };
  return { run, ran };
}

test('findPython takes the first ≥ 3.11 and prefers the carried wheels\' version', async () => {
  const { run } = fakeSystem({ '/py/ext': '3.12', python3: '3.11', python: '3.10' });
  assert.deepEqual(await findPython(['/py/ext', 'python3.11', 'python3', 'python'], '3.11', run), { path: 'python3', version: '3.11' });
  assert.deepEqual(await findPython(['/py/ext', 'python'], '3.11', run), { path: '/py/ext', version: '3.12' });
});

test('no Python ≥ 3.11: the error names what was found and what to do', async () => {
  const { run } = fakeSystem({ python3: '3.9' });
  await assert.rejects(findPython(['', 'python3.11', 'python3', 'python'], '3.11', run), (err: Error) => {
    assert.ok(err instanceof NoSuitablePython);
    assert.match(err.message, /needs Python 3\.11 or newer/);
    assert.match(err.message, /python3\.11 \(not found\), python3 \(3\.9\), python \(not found\)/);
    assert.match(err.message, /coder\.server\.path/);
    return true;
  });
});

test('the environment: venv, the wheels unpacked, pip install --no-index of the carried wheel, then reused', async () => {
  const ext = extensionDir();
  const storage = mkdtempSync(join(tmpdir(), 'coder-storage-'));
  const { run, ran } = fakeSystem({});
  const said: string[] = [];
  const exe = await createEnvironment({ dir: join(ext, 'server'), bundle: BUNDLE }, storage, { path: '/usr/bin/python3', version: '3.11' }, run, (m) => said.push(m));
  const env = join(storage, 'coder-ls-0.1.0-py3.11');
  assert.equal(exe, join(env, 'bin', 'coder-ls'));
  assert.deepEqual(ran[0], ['/usr/bin/python3', '-m', 'venv', env]);
  assert.equal(ran[1][0], '/usr/bin/python3');
  assert.equal(ran[1][3], join(ext, 'server', BUNDLE.deps));
  assert.deepEqual(ran[2], [join(env, 'bin', 'python'), '-m', 'pip', 'install', '--quiet', '--no-index', '--find-links', `${env}.wheels`, join(ext, 'server', BUNDLE.wheel)]);
  assert.match(readFileSync(join(env, '.coder-ls-complete'), 'utf8'), /^0\.1\.0 \/usr\/bin\/python3 3\.11/);
  assert.ok(!existsSync(`${env}.wheels`), 'the unpacked wheels are removed');
  assert.deepEqual(said, ['creating a Python 3.11 environment', 'unpacking the server and its dependencies', 'installing coder-ls (no network needed)']);
  ran.length = 0;
  assert.equal(await createEnvironment({ dir: join(ext, 'server'), bundle: BUNDLE }, storage, { path: '/usr/bin/python3', version: '3.11' }, run, () => undefined), exe);
  assert.deepEqual(ran, [], 'a complete environment is reused as it is');
});

test('another Python version: the index is allowed for the compiled wheels, and the progress says so', async () => {
  const ext = extensionDir();
  const storage = mkdtempSync(join(tmpdir(), 'coder-storage-'));
  const { run, ran } = fakeSystem({});
  const said: string[] = [];
  await createEnvironment({ dir: join(ext, 'server'), bundle: BUNDLE }, storage, { path: 'python3', version: '3.13' }, run, (m) => said.push(m));
  assert.ok(!ran[2].includes('--no-index'));
  assert.match(said[2], /Python 3\.13: compiled packages come from the package index/);
});

test('a failed step names itself and leaves nothing half-made', async () => {
  const ext = extensionDir();
  const storage = mkdtempSync(join(tmpdir(), 'coder-storage-'));
  const { run } = fakeSystem({}, 'pip');
  await assert.rejects(
    createEnvironment({ dir: join(ext, 'server'), bundle: BUNDLE }, storage, { path: 'python3', version: '3.11' }, run, () => undefined),
    /could not set up its server \(pip install with python3 3\.11\): ERROR: pip went wrong/,
  );
  assert.ok(!existsSync(join(storage, 'coder-ls-0.1.0-py3.11')));
});

test('pip runs without the user\'s pip configuration', () => {
  const env = pipEnv({ PATH: '/bin', PIP_INDEX_URL: 'http://x', PIP_CONSTRAINT: '/c', VIRTUAL_ENV: '/v', HOME: '/h' });
  assert.deepEqual(env, { PATH: '/bin', HOME: '/h', PIP_CONFIG_FILE: '/dev/null', PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1' });
});

test('first start with no coder-ls anywhere: the own environment is made with progress, with the Python extension\'s interpreter first', async () => {
  const ext = extensionDir();
  const storage = mkdtempSync(join(tmpdir(), 'coder-storage-'));
  extensions.set('ms-python.python', {
    isActive: true,
    exports: {
      environments: {
        getActiveEnvironmentPath: () => ({ path: '/envs/proj' }),
        resolveEnvironment: async () => ({ executable: { uri: { fsPath: '/envs/proj/bin/python' } } }),
      },
    },
  });
  const { run, ran } = fakeSystem({ '/envs/proj/bin/python': '3.11' });
  const log: string[] = [];
  const exe = await bundledServer(ext, storage, (l) => log.push(l), run);
  assert.equal(exe, join(storage, 'coder-ls-0.1.0-py3.11', 'bin', 'coder-ls'));
  assert.equal(ran[0][0], '/envs/proj/bin/python');
  assert.equal(progresses.length, 1);
  assert.equal(progresses[0].options.location, 15);
  assert.match(progresses[0].options.title ?? '', /setting up coder-ls/);
  assert.ok(progresses[0].messages.includes('installing coder-ls (no network needed)'));
  assert.ok(log.some((l) => /ready in \d+\.\d s/.test(l)));
  // the next start finds it: no progress, no run
  ran.length = 0;
  assert.equal(await bundledServer(ext, storage, () => undefined, run), exe);
  assert.deepEqual(ran, []);
  assert.equal(progresses.length, 1);
});

test('a build that carries no server: none (the not-found message stays as it was)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'coder-ext-'));
  assert.equal(await bundledServer(dir, dir, () => undefined, fakeSystem({}).run), undefined);
});

test('coder.server.path still wins over the own environment, and a missing one is reported as before', async () => {
  const ext = extensionDir();
  const storage = mkdtempSync(join(tmpdir(), 'coder-storage-'));
  const output = { appendLine: () => undefined } as unknown as import('vscode').OutputChannel;
  setSetting('coder.server.path', '/nowhere/coder-ls');
  await assert.rejects(serverCommand(output, { extensionPath: ext, storage }), /coder-ls was not found \(tried: \/nowhere\/coder-ls\)/);
  assert.equal(progresses.length, 0, 'no environment is made when the user named a server');
  assert.ok(!calls.some((c) => c.fn === 'openExternal'));
  assert.ok(INSTALL_DOCS.endsWith('docs/vscode.md#install'));
});
