/**
 * The editor as the agent's eyes (docs/protocol.md, "The editor as the agent's eyes"):
 * `coder/diagnostics` answered from `vscode.languages.getDiagnostics()`, and
 * `coder/languageQuery` from VS Code's own language features (`vscode.execute*Provider`),
 * which ask every language server and extension but coder-ls (it provides none of these).
 * Answers are plain LSP JSON: 0-based positions, LSP's 1-based severities and symbol kinds.
 */
export const DIAGNOSTICS_METHOD = 'coder/diagnostics';
export const LANGUAGE_QUERY_METHOD = 'coder/languageQuery';

interface UriLike {
  toString(): string;
}
interface PositionLike {
  line: number;
  character: number;
}
interface RangeLike {
  start: PositionLike;
  end: PositionLike;
}
interface DiagnosticLike {
  range: RangeLike;
  message: string;
  severity: number; // vscode.DiagnosticSeverity: Error 0 … Hint 3
  source?: string;
  code?: string | number | { value: string | number };
}

/** What the answers need of the `vscode` module (tests give a stand-in). */
export interface EyesApi {
  getDiagnostics(): Array<[UriLike, readonly DiagnosticLike[]]>;
  execute(command: string, ...args: unknown[]): Thenable<unknown>;
  uri(text: string): UriLike;
  position(line: number, character: number): unknown;
}

export interface DiagnosticsParams {
  uris?: string[] | null;
}
export interface LanguageQueryParams {
  kind: 'definition' | 'references' | 'symbols' | 'hover';
  uri?: string | null;
  position?: PositionLike | null;
  query?: string | null;
}

const range = (r: RangeLike) => ({
  start: { line: r.start.line, character: r.start.character },
  end: { line: r.end.line, character: r.end.character },
});

export function diagnostics(api: EyesApi, params: DiagnosticsParams | undefined): unknown[] {
  const wanted = params?.uris ? new Set(params.uris) : undefined;
  const out: unknown[] = [];
  for (const [uri, list] of api.getDiagnostics()) {
    const key = uri.toString();
    if (wanted && !wanted.has(key)) continue;
    const own = list.filter((d) => d.source !== 'coder'); // the server's /review findings
    if (!own.length && !wanted) continue;
    out.push({
      uri: key,
      diagnostics: own.map((d) => ({
        range: range(d.range),
        message: d.message,
        severity: d.severity + 1,
        source: d.source,
        code: typeof d.code === 'object' && d.code !== null ? d.code.value : d.code,
      })),
    });
  }
  return out;
}

interface LocationLike {
  uri?: UriLike;
  range?: RangeLike;
  targetUri?: UriLike;
  targetRange?: RangeLike;
  targetSelectionRange?: RangeLike;
}

function location(l: LocationLike): unknown {
  if (l.targetUri) return { uri: l.targetUri.toString(), range: range(l.targetSelectionRange ?? l.targetRange!) };
  return { uri: l.uri!.toString(), range: range(l.range!) };
}

interface SymbolLike {
  name: string;
  kind: number; // vscode.SymbolKind: File 0 …
  containerName?: string;
  location?: LocationLike;
  range?: RangeLike;
  selectionRange?: RangeLike;
  children?: SymbolLike[];
}

function symbols(list: SymbolLike[], uri: string | undefined, container: string | undefined, out: unknown[]): unknown[] {
  for (const s of list) {
    if (s.location) {
      out.push({ name: s.name, kind: s.kind + 1, containerName: s.containerName || undefined, location: location(s.location) });
    } else if (uri && (s.selectionRange ?? s.range)) {
      out.push({ name: s.name, kind: s.kind + 1, containerName: container, location: { uri, range: range((s.selectionRange ?? s.range)!) } });
      symbols(s.children ?? [], uri, s.name, out);
    }
  }
  return out;
}

function hoverText(contents: unknown[]): string {
  return contents
    .map((c) => (typeof c === 'string' ? c : typeof c === 'object' && c !== null && 'value' in c ? String((c as { value: unknown }).value) : ''))
    .filter(Boolean)
    .join('\n\n');
}

export async function languageQuery(api: EyesApi, params: LanguageQueryParams): Promise<unknown> {
  if (params.kind === 'symbols') {
    if (params.query) {
      const found = ((await api.execute('vscode.executeWorkspaceSymbolProvider', params.query)) ?? []) as SymbolLike[];
      return symbols(found, undefined, undefined, []);
    }
    if (!params.uri) throw new Error('coder/languageQuery symbols: a query or a uri is needed');
    const found = ((await api.execute('vscode.executeDocumentSymbolProvider', api.uri(params.uri))) ?? []) as SymbolLike[];
    return symbols(found, params.uri, undefined, []);
  }
  if (!params.uri || !params.position) throw new Error(`coder/languageQuery ${params.kind}: a uri and a position are needed`);
  const at = [api.uri(params.uri), api.position(params.position.line, params.position.character)];
  if (params.kind === 'hover') {
    const hovers = ((await api.execute('vscode.executeHoverProvider', ...at)) ?? []) as Array<{ contents: unknown[] }>;
    const text = hovers.map((h) => hoverText(h.contents)).filter(Boolean).join('\n\n');
    return text ? { contents: { kind: 'markdown', value: text } } : null;
  }
  const command = params.kind === 'definition' ? 'vscode.executeDefinitionProvider' : 'vscode.executeReferenceProvider';
  if (params.kind !== 'definition' && params.kind !== 'references') throw new Error(`coder/languageQuery: unknown kind ${String(params.kind)}`);
  const found = ((await api.execute(command, ...at)) ?? []) as LocationLike[];
  return found.map(location);
}
