// Unsaved buffers in a real VS Code (contract section 23, issue 34): a TypeScript file is
// opened and typed in, never saved; the model's `read` and `grep` see the typed line, marked
// as an unsaved editor buffer, while the disk keeps the old text and the tab stays dirty.
// The scripted model records no request, so what its next request carried is read where the
// server builds it from: the session log (.coder/sessions), beside the chat's tool entries.
// Run by vscode_e2e.mjs with CODER_E2E_ONLY=buffers (its turns: vscode_e2e_buffers_script.json).
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { quickOpen } from './vscode_e2e_chat.mjs';

const TYPED = 'export const typedNotSaved = 42;';
const DISK = 'export const savedValue = 1;\n';
const NOTE = 'unsaved editor buffer';

/** Every file under `dir` (the session log's segments), as text. */
function textsUnder(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...textsUnder(path));
    else out.push(readFileSync(path, 'utf8'));
  }
  return out;
}

export async function bufferSteps({ page, chat, send, until, screenshot, step, WS, transcriptText }) {
  const file = join(WS, 'notes.ts');
  writeFileSync(file, DISK);
  // open notes.ts with Quick Open, type a line at its end, do not save
  await quickOpen(page, until, 'notes.ts');
  const tab = page.locator('.tabs-container .tab', { hasText: 'notes.ts' }).first();
  await until('the notes.ts tab', async () => tab.isVisible(), 15000);
  await page.locator('.editor-instance .view-line', { hasText: 'savedValue' }).first().click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(TYPED);
  await until('notes.ts dirty (unsaved)', async () => /\bdirty\b/.test((await tab.getAttribute('class')) ?? ''), 10000);
  await screenshot('buffer-typed-unsaved');

  await send('what does notes.ts export?');
  await until('the answer about notes.ts', async () => (await transcriptText()).includes('notes.ts exports typedNotSaved'), 30000);
  // the chat's tool entries: the read and the grep show the typed line, said to be unsaved
  const tools = chat.locator('#transcript > .entry.tool');
  const read = (await tools.filter({ hasText: 'notes.ts' }).allTextContents()).join('\n');
  if (!read.includes('typedNotSaved')) throw new Error(`the chat's read/grep do not show the typed line: ${read}`);
  // the grep's sentence counts the matches, not the server's note on the buffer
  const said = (await chat.locator('#transcript > .entry.tool > summary').allInnerTexts()).map((x) => x.trim().replace(/\s+/g, ' '));
  if (!said.some((x) => /Searched for typedNotSaved · 1 match$/.test(x))) throw new Error(`the grep's sentence: ${JSON.stringify(said)}`);
  // what the model's next request was built from: the tool results in the session log
  const results = [];
  const walk = (v) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      if (v.type === 'tool_result') results.push(JSON.stringify(v.content));
      else Object.values(v).forEach(walk);
    }
  };
  for (const text of textsUnder(join(WS, '.coder', 'sessions'))) {
    for (const line of text.split('\n')) {
      try {
        walk(JSON.parse(line));
      } catch {
        /* not a JSON line (an index, a lock) */
      }
    }
  }
  const carried = results.filter((r) => r.includes('typedNotSaved = 42') && r.includes(NOTE));
  if (carried.length < 2) {
    throw new Error(`the model was not sent the buffer with the note (read and grep): ${results.join('\n').slice(0, 2000)}`);
  }
  if (readFileSync(file, 'utf8') !== DISK) throw new Error('notes.ts changed on disk');
  if (!/\bdirty\b/.test((await tab.getAttribute('class')) ?? '')) throw new Error('the typed line was saved');
  step('the model read and grepped the unsaved buffer of notes.ts (the note went with it); the disk kept its text');
  await screenshot('buffer-read-by-the-model');
}
