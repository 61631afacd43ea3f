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

/** How to start the server: `coder.server.path` (default `coder-ls`) and `coder.server.args`. */
export function launchConfig(get: <T>(key: string) => T | undefined): LaunchConfig {
  const path = get<string>('server.path');
  const args = get<unknown>('server.args');
  return {
    command: typeof path === 'string' && path.trim() ? path.trim() : 'coder-ls',
    args: Array.isArray(args) ? args.filter((a): a is string => typeof a === 'string') : [],
  };
}
