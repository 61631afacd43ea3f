/**
 * Settings → server configuration. VS Code keys `coder.a.b` map to the server's
 * camelCase nested config `{a: {b}}`; only keys the user actually set are sent,
 * and `coder.server.*` (how to launch the server) never is.
 */

/** The part of `vscode.WorkspaceConfiguration` this module needs. */
export interface ConfigSource {
  inspect<T>(key: string):
    | {
        globalValue?: T;
        workspaceValue?: T;
        workspaceFolderValue?: T;
      }
    | undefined;
  /** The effective value (all levels merged, the default included). */
  get?<T>(key: string): T | undefined;
}

/** Every setting forwarded to the server, relative to the `coder` section. */
export const SERVER_KEYS = [
  'model',
  'provider',
  'permissions',
  'timezone',
  'maxSteps',
  'shell.timeoutSeconds',
  'shell.maxOutputBytes',
  'workflow.autoVerifyAfterEdit',
  'workflow.verifyCommands',
  'workflow.maxVerifyAttempts',
  'agent.follow',
] as const;

export const PRESETS = ['strict', 'balanced', 'auto-edit', 'yolo'] as const;

export type ServerConfig = { [key: string]: unknown };

/** The value the user set (folder > workspace > user), or undefined when unset. */
export function userValue<T>(source: ConfigSource, key: string): T | undefined {
  const i = source.inspect<T>(key);
  if (!i) return undefined;
  return i.workspaceFolderValue ?? i.workspaceValue ?? i.globalValue;
}

/** `initializationOptions` / `settings.coder`: nested camelCase, user-set keys only. */
export function buildServerConfig(source: ConfigSource): ServerConfig {
  const out: ServerConfig = {};
  for (const key of SERVER_KEYS) {
    const value = userValue<unknown>(source, key);
    if (value === undefined || value === null) continue;
    if (typeof value === 'string' && value.trim() === '' && key !== 'timezone') continue;
    const parts = key.split('.');
    let node = out;
    for (const p of parts.slice(0, -1)) {
      const child = node[p];
      node = (typeof child === 'object' && child !== null ? child : (node[p] = {})) as ServerConfig;
    }
    node[parts[parts.length - 1]] = value;
  }
  return out;
}

/** The `workspace/didChangeConfiguration` params for the server. */
export function didChangeParams(source: ConfigSource): { settings: { coder: ServerConfig } } {
  return { settings: { coder: buildServerConfig(source) } };
}

export interface LaunchConfig {
  command: string;
  args: string[];
}

/**
 * How to start the server: `coder.server.path` (default `coder-ls`) and
 * `coder.server.args`, read with `inspect` so the user's own value wins over the
 * default at every level (folder > workspace > user or remote).
 */
export function launchConfig(source: ConfigSource): LaunchConfig {
  // `get` as the fallback: a level `inspect` does not name (remote user settings) still counts
  const path = userValue<unknown>(source, 'server.path') ?? source.get?.<unknown>('server.path');
  const args = userValue<unknown>(source, 'server.args') ?? source.get?.<unknown>('server.args');
  return {
    command: typeof path === 'string' && path.trim() ? path.trim() : DEFAULT_SERVER,
    args: Array.isArray(args) ? args.filter((a): a is string => typeof a === 'string') : [],
  };
}

export const SERVER_PATH_KEY = 'coder.server.path';
export const DEFAULT_SERVER = 'coder-ls';

export interface ResolvedServer {
  /** The executable to start, or undefined when none of `tried` exists. */
  command: string | undefined;
  /** Where we looked, in order (for the error message). */
  tried: string[];
}

/**
 * The server executable: the configured `coder.server.path`; else (left at its
 * default) the workspace's `.venv/bin/coder-ls`, else `coder-ls` on PATH. A
 * remote or code-server extension host gets PATH from a login shell, where a
 * venv is rarely active, hence the workspace venv before PATH.
 * A configured bare name is looked up on PATH; a relative path is taken from
 * the first workspace folder.
 */
export function resolveServer(
  configured: string,
  folders: readonly string[],
  pathEnv: string,
  isExecutable: (path: string) => boolean,
): ResolvedServer {
  const tried: string[] = [];
  const check = (p: string): string | undefined => {
    tried.push(p);
    return isExecutable(p) ? p : undefined;
  };
  const onPath = (name: string): string | undefined => {
    for (const dir of pathEnv.split(':').filter(Boolean)) {
      const found = check(`${dir.replace(/\/+$/, '')}/${name}`);
      if (found) return found;
    }
    if (!pathEnv) tried.push(`${name} on PATH (PATH is empty)`);
    return undefined;
  };
  const name = configured.trim() || DEFAULT_SERVER;
  if (name !== DEFAULT_SERVER) {
    if (name.startsWith('/')) return { command: check(name), tried };
    if (name.includes('/')) return { command: folders.length ? check(`${folders[0]}/${name}`) : check(name), tried };
    return { command: onPath(name), tried };
  }
  for (const folder of folders) {
    const found = check(`${folder}/.venv/bin/${DEFAULT_SERVER}`);
    if (found) return { command: found, tried };
  }
  return { command: onPath(DEFAULT_SERVER), tried };
}

/** The error shown when no server executable was found. */
export function notFoundMessage(resolved: ResolvedServer): string {
  const shown = resolved.tried.slice(0, 8).join(', ') + (resolved.tried.length > 8 ? `, … (${resolved.tried.length} places)` : '');
  return (
    `coder-ls was not found (tried: ${shown}). Set "${SERVER_PATH_KEY}" to the absolute path of the coder-ls ` +
    'executable (e.g. /path/to/project/.venv/bin/coder-ls); on code-server or a remote host, set it in the Remote settings.'
  );
}
