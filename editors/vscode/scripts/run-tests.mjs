// Runs every compiled test file under out/test with node's built-in test runner.
// Usage: node scripts/run-tests.mjs [unit|integration]
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const which = process.argv[2];
const roots = which ? [join('out', 'test', which)] : [join('out', 'test', 'unit'), join('out', 'test', 'integration')];
const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.test.js')) files.push(p);
  }
};
roots.forEach(walk);
const res = spawnSync(process.execPath, ['--enable-source-maps', '--test', '--test-reporter=spec', ...files], { stdio: 'inherit' });
process.exit(res.status ?? 1);
