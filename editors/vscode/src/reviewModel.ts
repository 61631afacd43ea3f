/**
 * The MODEL of the extension's own edit review (contract section 15): the changes of a
 * proposed edit as hunks the user accepts or rejects one by one before anything lands.
 * Pure TypeScript (no `vscode`): positions are LSP's (line, UTF-16 character).
 */

export interface Pos {
  line: number;
  character: number;
}

export interface Hunk {
  start: Pos;
  end: Pos;
  newText: string;
  accepted: boolean;
}

export interface FileReview {
  /** The file's URI (as the server sent it). */
  uri: string;
  original: string;
  hunks: Hunk[];
}

export function offsetAt(text: string, pos: Pos): number {
  let offset = 0;
  for (let line = 0; line < pos.line; line++) {
    const nl = text.indexOf('\n', offset);
    if (nl < 0) return text.length;
    offset = nl + 1;
  }
  const eol = text.indexOf('\n', offset);
  const lineEnd = eol < 0 ? text.length : eol;
  return Math.min(offset + pos.character, lineEnd);
}

/** The file's text with the accepted hunks applied (hunks never overlap: LSP forbids it). */
export function textWith(review: FileReview, accepted: (h: Hunk, i: number) => boolean = (h) => h.accepted): string {
  const spans = review.hunks
    .map((h, i) => ({ h, i, from: offsetAt(review.original, h.start), to: offsetAt(review.original, h.end) }))
    .filter(({ h, i }) => accepted(h, i))
    .sort((a, b) => a.from - b.from || a.i - b.i);
  let out = '';
  let at = 0;
  for (const s of spans) {
    out += review.original.slice(at, s.from) + s.h.newText;
    at = Math.max(at, s.to);
  }
  return out + review.original.slice(at);
}

/** The line, in the text shown on the right (`textWith`), where each hunk begins: where a
 * lens for it goes. */
export function hunkLines(review: FileReview): number[] {
  const order = review.hunks
    .map((h, i) => ({ h, i, from: offsetAt(review.original, h.start), to: offsetAt(review.original, h.end) }))
    .sort((a, b) => a.from - b.from || a.i - b.i);
  const lines = new Array<number>(review.hunks.length).fill(0);
  let shownLine = 0; // lines of the shown text so far
  let at = 0;
  for (const s of order) {
    shownLine += countNewlines(review.original.slice(at, s.from));
    lines[s.i] = shownLine;
    const replacement = s.h.accepted ? s.h.newText : review.original.slice(s.from, s.to);
    shownLine += countNewlines(replacement);
    at = Math.max(at, s.to);
  }
  return lines;
}

function countNewlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) n++;
  return n;
}

/** A one-line description of a hunk for its lens: `+3 −1 lines`. */
export function hunkSummary(review: FileReview, index: number): string {
  const h = review.hunks[index];
  const old = review.original.slice(offsetAt(review.original, h.start), offsetAt(review.original, h.end));
  const lines = (s: string): number => (s ? countNewlines(s.endsWith('\n') ? s : `${s}\n`) : 0);
  const added = lines(h.newText);
  const removed = lines(old);
  return `+${added} −${removed} line${added + removed === 1 ? '' : 's'}`;
}

/** What the user decided, for the answer to the server and the message shown. */
export function decisionSummary(files: readonly FileReview[]): { accepted: number; total: number } {
  let accepted = 0;
  let total = 0;
  for (const f of files)
    for (const h of f.hunks) {
      total++;
      if (h.accepted) accepted++;
    }
  return { accepted, total };
}
