/**
 * Which version of the editor contract this extension and the server speak (contract section
 * 24, docs/protocol.md "Versions"). The extension sends its own as
 * `initializationOptions.protocolVersion`; the server answers
 * `capabilities.experimental.coder.protocolVersion`. When the MAJORs differ the extension says
 * so in one sentence naming both and what to update, and drops the server's own copy of that
 * warning (it starts with `MISMATCH_PREFIX`). Pure: no `vscode` import.
 */

/** The contract this build of the extension was written for ("MAJOR.MINOR"). */
export const PROTOCOL_VERSION = '1.0';

/** How the server's own mismatch warning starts (coder_ls/protocolversion.py). */
export const MISMATCH_PREFIX = 'coder-ls protocol mismatch:';

/** A server that announces nothing predates the announcement: it speaks 1.0. */
export const UNANNOUNCED = '1.0';

export function major(version: unknown): number | undefined {
  if (typeof version !== 'string') return undefined;
  const m = /^(\d+)\.(\d+)$/.exec(version.trim());
  return m ? Number(m[1]) : undefined;
}

/** The version the server announced in its `initialize` answer, or `UNANNOUNCED`. */
export function serverProtocol(result: { capabilities?: { experimental?: unknown } } | undefined): string {
  const experimental = result?.capabilities?.experimental as { coder?: { protocolVersion?: unknown } } | undefined;
  const announced = experimental?.coder?.protocolVersion;
  return typeof announced === 'string' && major(announced) !== undefined ? announced.trim() : UNANNOUNCED;
}

export interface Mismatch {
  /** What to update: the server (it is older) or this extension (it is older). */
  update: 'server' | 'extension';
  message: string;
}

/**
 * The mismatch between the server at `command` and this extension, or undefined when their
 * MAJORs agree. `serverVersion` is the package version from `serverInfo`, when it said one.
 */
export function checkVersions(server: string, command: string, serverVersion?: string): Mismatch | undefined {
  const theirs = major(server);
  const ours = major(PROTOCOL_VERSION);
  if (theirs === undefined || ours === undefined || theirs === ours) return undefined;
  const who = `coder-ls${serverVersion ? ` ${serverVersion}` : ''} (${command})`;
  const both = `${who} speaks protocol ${server} and this Coder extension speaks ${PROTOCOL_VERSION}`;
  if (theirs < ours) {
    return {
      update: 'server',
      message:
        `${both}: update coder-ls (\`pipx upgrade coder-ls\` or \`uv tool upgrade coder-ls\`), ` +
        'or clear "coder.server.path" so the extension uses the coder-ls it carries.',
    };
  }
  return {
    update: 'extension',
    message: `${both}: update the Coder extension, or set "coder.server.path" to a coder-ls for protocol ${ours}.x.`,
  };
}

/** Whether a server `window/showMessage` is its copy of the mismatch the extension says itself. */
export function isServerMismatchMessage(message: string): boolean {
  return message.startsWith(MISMATCH_PREFIX);
}
