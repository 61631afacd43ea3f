// Runs the extension's own first-start setup (out/src/serverEnv.js, compiled by
// `npm run compile-tests`) outside VS Code: the server/ folder of a .vsix (unpacked),
// a storage folder, a Python. Prints one JSON line: {exe, seconds, python, steps}.
// Used by benchmarks/bench_vscode_env.py to time the environment's creation.
//   node scripts/make-env.mjs SERVER_DIR STORAGE [PYTHON...]
import { createRequire } from 'node:module';
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const env = require(join(dirname(fileURLToPath(import.meta.url)), '..', 'out', 'src', 'serverEnv.js'));
const [serverDir, storage, ...pythons] = process.argv.slice(2);
const run = (command, args) =>
  new Promise((resolve) =>
    execFile(command, args, { env: env.pipEnv(process.env), maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 127) : 0, stdout: String(stdout), stderr: String(stderr) }),
    ),
  );
const server = env.readBundle(dirname(serverDir));
if (!server) throw new Error(`no bundle.json in ${serverDir}`);
const t0 = Date.now();
const steps = [];
const python = await env.findPython(pythons.length ? pythons : [`python${server.bundle.python}`, 'python3', 'python'], server.bundle.python, run);
const exe = await env.createEnvironment(server, storage, python, run, (m) => steps.push([m, (Date.now() - t0) / 1000]));
console.log(JSON.stringify({ exe, seconds: (Date.now() - t0) / 1000, python, steps }));
