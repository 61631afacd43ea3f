/**
 * Paths as the user names them: relative to the workspace folder. The server speaks in
 * `file:` URIs and absolute paths; the transcript shows `app.py`, and keeps the absolute
 * form only as the target of a click. Pure (no `vscode`): shared by the webview.
 */

/** The path of a `file:` URI (decoded), or the text as it is when it is not one. */
export function uriPath(uriOrPath: string): string {
  const m = /^file:\/\/[^/]*(\/.*)$/.exec(uriOrPath);
  if (!m) return uriOrPath;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return m[1];
  }
}

function trimSlash(root: string): string {
  return root.length > 1 ? root.replace(/\/+$/, '') : root;
}

/**
 * `uriOrPath` relative to the workspace folder that holds it: `app.py`, `src/x.ts`;
 * with several folders, the folder's name leads (`api/src/x.ts`). Outside every folder,
 * or not a file, it is returned as a path (a URI of another scheme as it is).
 */
export function relPath(uriOrPath: string, roots: readonly string[]): string {
  const path = uriPath(uriOrPath);
  for (const r of roots) {
    const root = trimSlash(r);
    if (path === root) return roots.length > 1 ? (root.split('/').pop() ?? root) : '.';
    if (path.startsWith(`${root}/`)) {
      const rel = path.slice(root.length + 1);
      return roots.length > 1 ? `${root.split('/').pop()}/${rel}` : rel;
    }
  }
  return path;
}

/** `text` with every workspace folder's absolute prefix dropped (tool output, notices). */
export function relText(text: string, roots: readonly string[]): string {
  let out = text;
  for (const r of roots) {
    const root = trimSlash(r);
    if (root.length < 2) continue;
    const name = roots.length > 1 ? `${root.split('/').pop()}/` : '';
    out = out.split(`file://${root}/`).join(name).split(`${root}/`).join(name);
  }
  return out;
}
