// Step 19 of the code-server scenario (tests/editors/vscode_e2e.mjs): the editor as the
// agent's eyes (contract section 23) with VS Code's built-in TypeScript server. main.ts has
// a type error and calls double() from util.ts; the scripted model calls `diagnostics`,
// then `definition` of double on main.ts's line 3 (tests/editors/vscode_e2e_eyes_script.json,
// the same turns end vscode_e2e_script.json). What the model got is read from the session
// log (the tool results, exactly as the model receives them): the TypeScript error, 1-based,
// and the definition in util.ts with its line.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { quickOpen } from './vscode_e2e_chat.mjs';

const UTIL = 'export function double(x: number): number {\n  return 2 * x;\n}\n';
const MAIN = "import { double } from './util';\nconst n: number = 'three';\nconsole.log(double(n));\n";

/** Every tool result of the workspace's newest session log, as text. */
function toolResults(ws) {
  const dir = join(ws, '.coder', 'sessions');
  const logs = readdirSync(dir).filter((f) => f.endsWith('.jsonl')).map((f) => join(dir, f));
  logs.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  return logs.length ? readFileSync(logs[0], 'utf8') : '';
}

/** @param t the driver's helpers: page, chat, transcriptText, send, until, screenshot, step, WS */
export async function eyesSteps(t) {
  const { page, chat, transcriptText, send, until, screenshot, step, WS } = t;
  writeFileSync(join(WS, 'util.ts'), UTIL);
  writeFileSync(join(WS, 'main.ts'), MAIN);
  await quickOpen(page, until, 'main.ts');
  await until('main.ts in an editor', async () => page.locator('.tabs-container .tab.active', { hasText: 'main.ts' }).isVisible(), 10000);
  // the TypeScript server starts with the first .ts file: its error shows as a squiggle
  await until("TypeScript's error in main.ts", async () => (await page.locator('.squiggly-error').count()) > 0, 90000);
  await screenshot('eyes-typescript-error');
  step('VS Code shows the TypeScript error in main.ts');

  await send('what does the editor say about main.ts?');
  await until('the answer after the diagnostics and definition calls', async () => (await transcriptText()).includes('EYES-DONE'), 60000);
  // the chat names the calls, and the diagnostics call opens on what the model got
  const text = await transcriptText();
  if (!text.includes("Read the editor's problems") || !text.includes('Looked up the definition of double')) {
    throw new Error(`eyes: the chat does not name the calls:\n${text}`);
  }
  await chat.locator('#transcript > .entry.tool > summary', { hasText: "Read the editor's problems" }).first().click();
  await until('the diagnostics call showing its result', async () => (await transcriptText()).includes('main.ts:2:7: error'), 5000);
  await screenshot('eyes-tools-answered');
  const log = toolResults(WS);
  const problems = [];
  if (!log.includes("main.ts:2:7: error: Type 'string' is not assignable to type 'number'.")) {
    problems.push("the diagnostics tool did not give the model main.ts:2:7 and TypeScript's error");
  }
  if (!log.includes('util.ts:1:17: export function double(x: number): number {')) {
    problems.push('the definition tool did not give the model util.ts:1:17 and its line');
  }
  if (problems.length) throw new Error(`eyes: ${problems.join('; ')}\nsession log tail: ${log.slice(-3000)}`);
  step('the model got TypeScript\'s error (main.ts:2:7) and the definition of double (util.ts:1:17)');
}
