/**
 * The diff of one agent edit as the transcript shows it inline: the hunks of the text
 * edits the server sent (`workspace/applyEdit`), each with the lines it removes and adds,
 * a little context, and whether it was applied (a review may reject some). Built by the
 * extension when it applies the edit, attached to the transcript at the `editApplied`
 * that follows. Pure (no `vscode`).
 */
import { offsetAt, type Pos } from './reviewModel';

export interface DiffLine {
  op: ' ' | '-' | '+';
  text: string;
}

export interface DiffHunk {
  /** 1-based first line of the hunk in the file before the edit. */
  oldStart: number;
  /** 1-based first line of the hunk in the file after the applied hunks. */
  newStart: number;
  lines: DiffLine[];
  /** Applied (false: rejected in the review, or the edit did not land). */
  accepted: boolean;
}

export interface EditDiff {
  hunks: DiffHunk[];
  /** Lines added and removed by the applied hunks. */
  added: number;
  removed: number;
  /** The user chose hunk by hunk (the extension's review): say what became of each. */
  reviewed: boolean;
}

export interface TextChange {
  start: Pos;
  end: Pos;
  newText: string;
  accepted: boolean;
}

/** Lines of context shown around each hunk. */
export const CONTEXT_LINES = 2;

function splitLines(text: string): string[] {
  if (!text) return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((l) => l.replace(/\r$/, ''));
}

function lineStart(text: string, line: number): number {
  return offsetAt(text, { line, character: 0 });
}

/** The offset just past line `line`'s newline (the text's end on the last line). */
function lineEndIncl(text: string, line: number): number {
  const from = lineStart(text, line);
  const nl = text.indexOf('\n', from);
  return nl < 0 ? text.length : nl + 1;
}

/** The diff of `changes` (non-overlapping, as LSP requires) made to `original`. */
export function diffOfChanges(original: string, changes: readonly TextChange[], reviewed = false): EditDiff {
  const all = splitLines(original);
  // each change as the lines it removes and adds (the same lines at both ends are context)
  const parts = changes
    .map((c, i) => ({ c, i, from: offsetAt(original, c.start), to: offsetAt(original, c.end) }))
    .sort((a, b) => a.from - b.from || a.i - b.i)
    .map(({ c, from, to }) => {
      const first = c.start.line;
      const endLine = c.end.line > c.start.line && c.end.character === 0 ? c.end.line - 1 : c.end.line;
      const blockFrom = lineStart(original, first);
      const blockTo = Math.max(lineEndIncl(original, Math.max(endLine, first)), to);
      const oldLines = splitLines(original.slice(blockFrom, blockTo));
      const newLines = splitLines(original.slice(blockFrom, from) + c.newText + original.slice(to, blockTo));
      let head = 0;
      while (head < oldLines.length && head < newLines.length && oldLines[head] === newLines[head]) head++;
      let tail = 0;
      while (
        tail < oldLines.length - head &&
        tail < newLines.length - head &&
        oldLines[oldLines.length - 1 - tail] === newLines[newLines.length - 1 - tail]
      )
        tail++;
      return {
        at: first + head, // 0-based line of the first changed line
        minus: oldLines.slice(head, oldLines.length - tail),
        plus: newLines.slice(head, newLines.length - tail),
        accepted: c.accepted,
      };
    })
    .filter((p) => p.minus.length || p.plus.length);
  const hunks: DiffHunk[] = [];
  let shift = 0; // lines added minus removed by the applied hunks above
  let added = 0;
  let removed = 0;
  let shown = 0; // lines of `original` shown so far (0-based, exclusive)
  parts.forEach((p, k) => {
    const next = parts[k + 1]?.at ?? all.length;
    const before = Math.min(p.at, Math.max(shown, p.at - CONTEXT_LINES));
    const afterEnd = Math.max(p.at + p.minus.length, Math.min(next, all.length, p.at + p.minus.length + CONTEXT_LINES));
    const lines: DiffLine[] = [
      ...all.slice(before, p.at).map((text) => ({ op: ' ' as const, text })),
      ...p.minus.map((text) => ({ op: '-' as const, text })),
      ...p.plus.map((text) => ({ op: '+' as const, text })),
      ...all.slice(p.at + p.minus.length, afterEnd).map((text) => ({ op: ' ' as const, text })),
    ];
    hunks.push({ oldStart: before + 1, newStart: before + 1 + shift, lines, accepted: p.accepted });
    shown = afterEnd;
    if (p.accepted) {
      shift += p.plus.length - p.minus.length;
      added += p.plus.length;
      removed += p.minus.length;
    }
  });
  return { hunks, added, removed, reviewed };
}

/** `+3 −1`: what the applied hunks changed. */
export function diffStat(diff: Pick<EditDiff, 'added' | 'removed'>): string {
  return `+${diff.added} −${diff.removed}`;
}

/** How many hunks the review rejected, of how many. */
export function rejectedHunks(diff: EditDiff): { rejected: number; total: number } {
  return { rejected: diff.hunks.filter((h) => !h.accepted).length, total: diff.hunks.length };
}
