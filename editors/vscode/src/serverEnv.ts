/**
 * The extension's own coder-ls (contract section 24): with no `coder.server.path` and no
 * `coder-ls` found, the first start makes a virtual environment in the extension's global
 * storage from what the `.vsix` carries in `server/` — the coder-ls wheel and, packed in one
 * `.tar.xz`, the wheels of every dependency for its platform and one CPython version — with
 * the user's Python ≥ 3.11 (`python -m venv`, then `pip install --no-index`): no network.
 * A Python of another version than the carried wheels' gets the pure-Python wheels from them
 * and the compiled ones from the package index (network needed, said in the progress).
 *
 * Everything that touches the system goes through `Runner` (tests script it); no `vscode`
 * import here (src/client.ts shows the progress and the errors).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** `server/bundle.json` of the `.vsix`, written by scripts/build-vsix. */
export interface Bundle {
  /** The coder-ls package version of the carried wheel. */
  version: string;
  protocolVersion: string;
  /** File names inside `server/`. */
  wheel: string;
  deps: string;
  /** The CPython "MAJOR.MINOR" the compiled dependency wheels are for. */
  python: string;
  /** The vsce target, e.g. `linux-x64`. */
  platform: string;
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export type Runner = (command: string, args: string[]) => Promise<RunResult>;

export const MIN_PYTHON: [number, number] = [3, 11];

export function readBundle(extensionPath: string): { dir: string; bundle: Bundle } | undefined {
  const dir = join(extensionPath, 'server');
  try {
    const bundle = JSON.parse(readFileSync(join(dir, 'bundle.json'), 'utf8')) as Bundle;
    if (!bundle.wheel || !bundle.deps || !existsSync(join(dir, bundle.wheel))) return undefined;
    return { dir, bundle };
  } catch {
    return undefined;
  }
}

/** Thrown when no Python ≥ 3.11 was found; the message says what was found where. */
export class NoSuitablePython extends Error {}

/** Thrown when a step of the environment's creation failed; the message names the step. */
export class EnvironmentFailed extends Error {}

export interface FoundPython {
  path: string;
  version: string;
}

const VERSION_SCRIPT = 'import sys; print("%d.%d" % sys.version_info[:2])';

function atLeast(version: string, min: [number, number]): boolean {
  const [maj, min_] = version.split('.').map(Number);
  return maj > min[0] || (maj === min[0] && min_ >= min[1]);
}

/**
 * The first candidate that runs and is Python ≥ 3.11, preferring one of `preferred` version
 * (the carried wheels'); candidates are tried in order (the Python extension's interpreter
 * first, then `python3.X`, `python3`, `python` on PATH).
 */
export async function findPython(candidates: string[], preferred: string, run: Runner): Promise<FoundPython> {
  const seen: string[] = [];
  let usable: FoundPython | undefined;
  for (const path of [...new Set(candidates.filter(Boolean))]) {
    let version: string | undefined;
    try {
      const r = await run(path, ['-c', VERSION_SCRIPT]);
      version = r.code === 0 ? r.stdout.trim() : undefined;
    } catch {
      version = undefined;
    }
    if (!version || !/^\d+\.\d+$/.test(version)) {
      seen.push(`${path} (not found)`);
      continue;
    }
    seen.push(`${path} (${version})`);
    if (!atLeast(version, MIN_PYTHON)) continue;
    if (version === preferred) return { path, version };
    usable ??= { path, version };
  }
  if (usable) return usable;
  throw new NoSuitablePython(
    `Coder needs Python ${MIN_PYTHON.join('.')} or newer to set up its server, and found none (tried: ${seen.join(', ')}). ` +
      'Install Python 3.11+ (or select it with the Python extension), or install coder-ls yourself and set "coder.server.path".',
  );
}

/** Where the environment for this bundle lives, and the executable it provides. */
export function environmentPaths(storage: string, bundle: Bundle, python: string): { dir: string; exe: string; done: string } {
  const dir = join(storage, `coder-ls-${bundle.version}-py${python}`);
  return { dir, exe: join(dir, 'bin', 'coder-ls'), done: join(dir, '.coder-ls-complete') };
}

/** An environment an earlier start made for this bundle (with any Python), when it is complete. */
export function existingEnvironment(storage: string, bundle: Bundle): string | undefined {
  let names: string[];
  try {
    names = readdirSync(storage);
  } catch {
    return undefined;
  }
  const prefix = `coder-ls-${bundle.version}-py`;
  for (const name of names.filter((n) => n.startsWith(prefix) && !n.endsWith('.wheels')).sort()) {
    const p = environmentPaths(storage, bundle, name.slice(prefix.length));
    if (existsSync(p.done) && existsSync(p.exe)) return p.exe;
  }
  return undefined;
}

/** pip without the user's configuration (its index, constraints or find-links would change what installs). */
export function pipEnv(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) if (!k.startsWith('PIP_') && k !== 'PYTHONPATH' && k !== 'VIRTUAL_ENV') env[k] = v;
  return { ...env, PIP_CONFIG_FILE: '/dev/null', PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1' };
}

/**
 * Make (or reuse) the environment: venv, the dependency wheels unpacked next to it, pip
 * install of the carried wheel, then a marker file; a half-made one is removed first.
 * Returns the `coder-ls` executable.
 */
export async function createEnvironment(
  server: { dir: string; bundle: Bundle },
  storage: string,
  python: FoundPython,
  run: Runner,
  report: (message: string) => void,
): Promise<string> {
  const { bundle } = server;
  const paths = environmentPaths(storage, bundle, python.version);
  if (existsSync(paths.done) && existsSync(paths.exe)) return paths.exe;
  rmSync(paths.dir, { recursive: true, force: true });
  mkdirSync(storage, { recursive: true });
  const wheels = `${paths.dir}.wheels`;
  rmSync(wheels, { recursive: true, force: true });
  const step = async (what: string, command: string, args: string[]): Promise<void> => {
    const r = await run(command, args);
    if (r.code !== 0) {
      const detail = (r.stderr || r.stdout).trim().split('\n').slice(-6).join('\n');
      throw new EnvironmentFailed(`Coder could not set up its server (${what} with ${python.path} ${python.version}): ${detail}`);
    }
  };
  try {
    report(`creating a Python ${python.version} environment`);
    await step('python -m venv', python.path, ['-m', 'venv', paths.dir]);
    report('unpacking the server and its dependencies');
    await step('unpacking the wheels', python.path, [
      '-c',
      // `filter` where this Python has it (3.11.4+): the archive is ours, but say so anyway
      "import sys, tarfile; t = tarfile.open(sys.argv[1]); t.extractall(sys.argv[2], **({'filter': 'data'} if hasattr(tarfile, 'data_filter') else {}))",
      join(server.dir, bundle.deps),
      wheels,
    ]);
    const offline = python.version === bundle.python;
    report(offline ? 'installing coder-ls (no network needed)' : `installing coder-ls (Python ${python.version}: compiled packages come from the package index)`);
    const pip = join(paths.dir, 'bin', 'python');
    await step('pip install', pip, [
      '-m',
      'pip',
      'install',
      '--quiet',
      ...(offline ? ['--no-index'] : []),
      '--find-links',
      wheels,
      join(server.dir, bundle.wheel),
    ]);
    writeFileSync(paths.done, `${bundle.version} ${python.path} ${python.version}\n`);
  } catch (err) {
    rmSync(paths.dir, { recursive: true, force: true });
    throw err;
  } finally {
    rmSync(wheels, { recursive: true, force: true });
  }
  return paths.exe;
}
