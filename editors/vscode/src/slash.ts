/** Slash-command completion: which catalog entries match what the user typed. Pure. */
import type { CommandInfo } from './protocol';

export interface SlashMatch {
  command: CommandInfo;
  /** The text the input box becomes when the match is accepted. */
  insertText: string;
}

/**
 * Matches for `input` when it is a slash command still being named (`/he`),
 * best first: prefix matches, then substring matches, each alphabetical.
 * Returns [] once the name is followed by a space, or for `!`/plain text.
 */
export function slashMatches(input: string, catalog: readonly CommandInfo[], limit = 20): SlashMatch[] {
  const m = /^\/(\S*)$/.exec(input);
  if (!m) return [];
  const query = m[1].toLowerCase();
  const prefix: CommandInfo[] = [];
  const inner: CommandInfo[] = [];
  const seen = new Set<string>();
  for (const c of catalog) {
    const name = c.name.replace(/^\//, '');
    const lower = name.toLowerCase();
    if (seen.has(lower) || c.userInvocable === false || c.hidden) continue;
    // a built-in's aliases (`/settings` for `/config`) find it too
    const names = [lower, ...(c.aliases ?? []).map((a) => a.toLowerCase())];
    if (names.some((n) => n.startsWith(query))) prefix.push(c);
    else if (query && names.some((n) => n.includes(query))) inner.push(c);
    else continue;
    seen.add(lower);
  }
  const byName = (a: CommandInfo, b: CommandInfo): number => a.name.localeCompare(b.name);
  return [...prefix.sort(byName), ...inner.sort(byName)].slice(0, limit).map((command) => ({
    command,
    insertText: `/${command.name.replace(/^\//, '')} `,
  }));
}

/** Splits `/name args` into its parts; null for text that is not a slash command. */
export function parseSlash(input: string): { name: string; args: string } | null {
  const m = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(input.trim());
  return m ? { name: m[1], args: (m[2] ?? '').trim() } : null;
}
