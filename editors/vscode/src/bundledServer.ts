/**
 * VS Code's side of the extension's own coder-ls (src/serverEnv.ts): the user's Python as the
 * Python extension names it (when installed) or PATH does, the progress notification of the
 * first start, and the errors that say what is missing with a button to the docs.
 */
import * as vscode from 'vscode';
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { DEFAULT_SERVER, notFoundMessage, resolveServer } from './config';
import {
  type Bundle,
  createEnvironment,
  EnvironmentFailed,
  existingEnvironment,
  findPython,
  NoSuitablePython,
  pipEnv,
  readBundle,
  type Runner,
} from './serverEnv';
import { serverLaunch } from './settings';

export const INSTALL_DOCS = 'https://github.com/coder-ls/coder-ls/blob/main/docs/vscode.md#install';

/** Runs a command without a shell; its output is kept (for the error message). */
export const realRunner: Runner = (command, args) =>
  new Promise((resolve) => {
    execFile(command, args, { env: pipEnv(process.env), maxBuffer: 16 << 20, timeout: 15 * 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 127) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr || (err && code === 127 ? err.message : '')) });
    });
  });

interface PythonApi {
  environments?: {
    getActiveEnvironmentPath?(resource?: vscode.Uri): { path: string } | undefined;
    resolveEnvironment?(env: { path: string } | string): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
  };
}

/** The interpreter the Python extension has selected for the workspace, if it is installed. */
async function pythonFromExtension(): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension<PythonApi>('ms-python.python');
  if (!ext) return undefined;
  try {
    const api = ext.isActive ? ext.exports : await ext.activate();
    const active = api?.environments?.getActiveEnvironmentPath?.(vscode.workspace.workspaceFolders?.[0]?.uri);
    if (!active) return undefined;
    const resolved = await api.environments?.resolveEnvironment?.(active);
    return resolved?.executable?.uri?.fsPath ?? active.path;
  } catch {
    return undefined;
  }
}

export function pythonCandidates(bundle: Bundle, fromExtension: string | undefined): string[] {
  return [fromExtension ?? '', `python${bundle.python}`, 'python3', 'python'];
}

/**
 * The `coder-ls` of the extension's own environment, made now if needed (with progress), or
 * undefined when this build of the extension carries no server (a development build).
 */
export async function bundledServer(
  extensionPath: string,
  storage: string,
  log: (line: string) => void,
  run: Runner = realRunner,
): Promise<string | undefined> {
  const server = readBundle(extensionPath);
  if (!server) return undefined;
  const existing = existingEnvironment(storage, server.bundle);
  if (existing) return existing;
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'Coder: setting up coder-ls (first start)', cancellable: false },
    async (progress) => {
      const started = Date.now();
      const say = (message: string): void => {
        log(`coder-ls setup: ${message}`);
        progress.report({ message });
      };
      say('looking for Python 3.11 or newer');
      const python = await findPython(pythonCandidates(server.bundle, await pythonFromExtension()), server.bundle.python, run);
      log(`coder-ls setup: using ${python.path} (Python ${python.version})`);
      const exe = await createEnvironment(server, storage, python, run, say);
      log(`coder-ls setup: ${exe} ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      return exe;
    },
  );
}

/** Whether an error is one of the setup's own, whose message says what is missing. */
export function isSetupError(err: unknown): err is NoSuitablePython | EnvironmentFailed {
  return err instanceof NoSuitablePython || err instanceof EnvironmentFailed;
}

export function openInstallDocs(): Thenable<boolean> {
  return vscode.env.openExternal(vscode.Uri.parse(INSTALL_DOCS));
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Thrown when no coder-ls executable was found; the message says where we looked. */
export class ServerNotFound extends Error {}

/**
 * The server to start: `coder.server.path`; left at its default, the workspace's venv or
 * `coder-ls` on PATH (src/config.ts), else the extension's own environment, made on the first
 * start from the wheels the `.vsix` carries (above).
 */
export async function serverCommand(
  output: vscode.OutputChannel,
  own: { extensionPath: string; storage: string } | undefined,
  run: Runner = realRunner,
): Promise<{ command: string; bundled: boolean }> {
  const launch = serverLaunch();
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  const resolved = resolveServer(launch.command, folders, process.env.PATH ?? '', isExecutable);
  if (resolved.command) return { command: resolved.command, bundled: false };
  if (own && launch.command === DEFAULT_SERVER) {
    const command = await bundledServer(own.extensionPath, own.storage, (line) => output.appendLine(line), run);
    if (command) return { command, bundled: true };
  }
  throw new ServerNotFound(notFoundMessage(resolved));
}

