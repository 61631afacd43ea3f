/**
 * Who an input came from (contract section 18). What the user types in our panel goes
 * through `Controller.run`, which sends `workspace/executeCommand` itself, straight to the
 * server: `typed`, the server's default. A `coder.*` command VS Code runs itself (a
 * `command:` URI in rendered output — a notification's message renders them as links and
 * runs them —, a keybinding, another extension) passes the language client's middleware
 * and is not the user's typing: it is marked `link`, whatever `origin` the caller put in,
 * and the server refuses a shell line, `/trust`, `/permissions` and file commands from it.
 * That holds with no arguments too: `command:coder.trust` is a link, not the palette (our
 * `coder.*` ids are not in the palette: package.json does not contribute them).
 */
export type Origin = 'typed' | 'codeAction' | 'link' | 'client' | 'remote';

/** Server commands whose argument has no `origin` (the server refuses unknown keys). */
const NO_ORIGIN = new Set(['coder.interrupt', 'coder.listCommands', 'coder.codeAction']);

export function markUntyped(command: string, args: unknown[]): unknown[] {
  if (!command.startsWith('coder.') || NO_ORIGIN.has(command)) return args;
  const [first, ...rest] = args;
  if (first === null || first === undefined) return [{ origin: 'link' }, ...rest];
  if (typeof first !== 'object' || Array.isArray(first)) return args; // the server refuses it
  return [{ ...(first as Record<string, unknown>), origin: 'link' }, ...rest];
}
