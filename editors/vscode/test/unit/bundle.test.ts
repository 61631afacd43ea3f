/** The esbuild bundle (dist/extension.js, built by `npm test`) loads and exports the entry points. */
import Module = require('module');
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const dist = join(__dirname, '..', '..', '..', 'dist');

test('dist/extension.js loads with only `vscode` external and exports activate/deactivate', { skip: !existsSync(join(dist, 'extension.js')) && 'run `npm run build` first' }, () => {
  // Any property of this stand-in is another stand-in (also usable as a base class).
  const handler: ProxyHandler<Record<string | symbol, unknown>> = {
    get(target, prop) {
      if (prop === '__esModule') return false;
      if (!(prop in target)) target[prop] = new Proxy(class {}, handler as ProxyHandler<object>);
      return target[prop];
    },
  };
  const stub = new Proxy<Record<string | symbol, unknown>>({}, handler);
  const loader = Module as unknown as { _load(request: string, parent: unknown, isMain: boolean): unknown };
  const original = loader._load;
  loader._load = function (request: string, parent: unknown, isMain: boolean): unknown {
    return request === 'vscode' ? stub : original.call(this, request, parent, isMain);
  };
  try {
    const ext = require(join(dist, 'extension.js')) as Record<string, unknown>;
    assert.equal(typeof ext.activate, 'function');
    assert.equal(typeof ext.deactivate, 'function');
  } finally {
    loader._load = original;
  }
  const webview = readFileSync(join(dist, 'webview.js'), 'utf8');
  assert.ok(!/require\(/.test(webview), 'the webview bundle is self-contained');
});
