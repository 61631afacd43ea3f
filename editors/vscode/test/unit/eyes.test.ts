import assert from 'node:assert/strict';
import { test } from 'node:test';
import { diagnostics, type EyesApi, languageQuery } from '../../src/eyes';

const uri = (text: string) => ({ toString: () => text });
const rng = (line: number, a: number, b: number) => ({ start: { line, character: a }, end: { line, character: b } });

/** A stand-in for VS Code's language features: what its providers answer, and what was asked. */
function fakeApi(answers: Record<string, unknown>, diags: EyesApi['getDiagnostics'] = () => []) {
  const asked: Array<{ command: string; args: unknown[] }> = [];
  const api: EyesApi = {
    getDiagnostics: diags,
    execute: async (command, ...args) => {
      asked.push({ command, args });
      const answer = answers[command];
      if (answer instanceof Error) throw answer;
      return answer;
    },
    uri: (text) => uri(text),
    position: (line, character) => ({ line, character }),
  };
  return { api, asked };
}

test('diagnostics: every file with some, LSP severities and codes, never the server\'s own findings', () => {
  const { api } = fakeApi({}, () => [
    [
      uri('file:///ws/a.ts'),
      [
        { range: rng(2, 6, 9), message: "Type 'string' is not assignable to type 'number'.", severity: 0, source: 'ts', code: 2322 },
        { range: rng(4, 0, 1), message: 'unused', severity: 3, source: 'eslint', code: { value: 'no-unused-vars' } },
        { range: rng(0, 0, 1), message: 'a finding of /review', severity: 1, source: 'coder' },
      ],
    ],
    [uri('file:///ws/clean.ts'), []],
  ]);
  assert.deepEqual(diagnostics(api, {}), [
    {
      uri: 'file:///ws/a.ts',
      diagnostics: [
        { range: rng(2, 6, 9), message: "Type 'string' is not assignable to type 'number'.", severity: 1, source: 'ts', code: 2322 },
        { range: rng(4, 0, 1), message: 'unused', severity: 4, source: 'eslint', code: 'no-unused-vars' },
      ],
    },
  ]);
  // with uris: only those, an empty list included (the file is known to be clean)
  assert.deepEqual(diagnostics(api, { uris: ['file:///ws/clean.ts'] }), [{ uri: 'file:///ws/clean.ts', diagnostics: [] }]);
});

test('definition: Locations and LocationLinks as LSP Locations, at the position asked', async () => {
  const { api, asked } = fakeApi({
    'vscode.executeDefinitionProvider': [
      { uri: uri('file:///ws/util.ts'), range: rng(0, 16, 19) },
      { targetUri: uri('file:///ws/b.ts'), targetRange: rng(3, 0, 40), targetSelectionRange: rng(3, 9, 12) },
    ],
  });
  const got = await languageQuery(api, { kind: 'definition', uri: 'file:///ws/main.ts', position: { line: 2, character: 7 } });
  assert.deepEqual(got, [
    { uri: 'file:///ws/util.ts', range: rng(0, 16, 19) },
    { uri: 'file:///ws/b.ts', range: rng(3, 9, 12) },
  ]);
  assert.equal(asked[0].command, 'vscode.executeDefinitionProvider');
  assert.equal(String(asked[0].args[0]), 'file:///ws/main.ts');
  assert.deepEqual(asked[0].args[1], { line: 2, character: 7 });
});

test('symbols: the workspace by query, a document by uri (DocumentSymbols flattened), LSP kinds', async () => {
  const { api } = fakeApi({
    'vscode.executeWorkspaceSymbolProvider': [
      { name: 'add', kind: 11, containerName: '', location: { uri: uri('file:///ws/util.ts'), range: rng(0, 0, 50) } },
    ],
    'vscode.executeDocumentSymbolProvider': [
      { name: 'Box', kind: 4, range: rng(0, 0, 80), selectionRange: rng(0, 6, 9), children: [{ name: 'open', kind: 5, range: rng(1, 2, 30), selectionRange: rng(1, 2, 6) }] },
    ],
  });
  assert.deepEqual(await languageQuery(api, { kind: 'symbols', query: 'add' }), [
    { name: 'add', kind: 12, containerName: undefined, location: { uri: 'file:///ws/util.ts', range: rng(0, 0, 50) } },
  ]);
  assert.deepEqual(await languageQuery(api, { kind: 'symbols', uri: 'file:///ws/box.ts' }), [
    { name: 'Box', kind: 5, containerName: undefined, location: { uri: 'file:///ws/box.ts', range: rng(0, 6, 9) } },
    { name: 'open', kind: 6, containerName: 'Box', location: { uri: 'file:///ws/box.ts', range: rng(1, 2, 6) } },
  ]);
});

test('hover: the providers\' contents as one markdown Hover, none as null; bad queries and failures reject', async () => {
  const { api } = fakeApi({
    'vscode.executeHoverProvider': [{ contents: [{ value: '```ts\nfunction add(a: number): number\n```' }, 'Adds.'] }],
    'vscode.executeReferenceProvider': new Error('the TypeScript server crashed'),
  });
  const at = { uri: 'file:///ws/a.ts', position: { line: 0, character: 3 } };
  assert.deepEqual(await languageQuery(api, { kind: 'hover', ...at }), {
    contents: { kind: 'markdown', value: '```ts\nfunction add(a: number): number\n```\n\nAdds.' },
  });
  assert.equal(await languageQuery(fakeApi({ 'vscode.executeHoverProvider': [] }).api, { kind: 'hover', ...at }), null);
  await assert.rejects(languageQuery(api, { kind: 'references', ...at }), /TypeScript server crashed/);
  await assert.rejects(languageQuery(api, { kind: 'definition', uri: 'file:///ws/a.ts' }), /a uri and a position are needed/);
});
