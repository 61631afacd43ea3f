/**
 * What goes with a chat input besides its text (docs/protocol.md, "Input"): the editor's
 * context (the active file and its selection, shown as a removable chip), pasted or dropped
 * images, and long pastes kept as `[Pasted text #N]` markers. Pure: the webview and the
 * extension host both use it, and the unit tests.
 */

export const PASTE_THRESHOLD = 4000; // the server's default `input.pasteThreshold`
export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

export interface ImageAttachment {
  data: string; // base64
  mediaType: string;
  name: string;
}

export interface EditorContext {
  uri: string;
  range?: { start: { line: number; character: number }; end: { line: number; character: number } };
}

/** The chip's text: `app.py` or `app.py:3-5` (1-based lines). */
export function contextLabel(ctx: EditorContext): string {
  const name = decodeURIComponent(ctx.uri.replace(/[?#].*$/, '').split('/').pop() ?? ctx.uri);
  if (!ctx.range) return name;
  const first = ctx.range.start.line + 1;
  // a selection that ends at the start of a line does not take that line
  const last = ctx.range.end.character === 0 && ctx.range.end.line > ctx.range.start.line ? ctx.range.end.line : ctx.range.end.line + 1;
  return first === last ? `${name}:${first}` : `${name}:${first}-${last}`;
}

/** `data:image/png;base64,xxx` → the attachment (null for what the server does not take). */
export function imageFromDataUrl(url: string, name: string): ImageAttachment | null {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (!m || !IMAGE_TYPES.includes(m[1])) return null;
  return { data: m[2], mediaType: m[1], name };
}

/** The marker a long paste leaves in the input box (the server shows `[Pasted text #N, L lines]`). */
export function pasteMarker(n: number): string {
  return `[Pasted text #${n}]`;
}

/** The pastes still named in `text` (a marker the user deleted drops its paste), renumbered. */
export function keptPastes(text: string, pastes: string[]): { text: string; pastes: string[] } {
  const kept: string[] = [];
  const out = text.replace(/\[Pasted text #(\d+)\]/g, (whole, n: string) => {
    const paste = pastes[Number(n) - 1];
    if (paste === undefined) return whole;
    kept.push(paste);
    return pasteMarker(kept.length);
  });
  return { text: out, pastes: kept };
}
