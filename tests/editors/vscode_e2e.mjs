// Drives a real VS Code (code-server) in Debian's Chromium through the Coder extension:
// the chat panel, /help, `!echo hi`, an agent edit reviewed change by change in
// the extension's diff (the edit is the approval question), /undo, Cancel of a running `!sleep 30` in the extension's Cancel
// notification, the "Coder: Fix" code action, "Coder: Revert agent change", a subagent
// stopped by its own Stop, a /task in the Tasks view, an image pasted into the chat with
// the editor-context chip, an ask_user question answered in a quick pick, and command: links (model output, a README) that try
// `!touch pwned`, `rm victim` and /trust (vscode_e2e_links.mjs). Asserts what the page shows (and
// the file on disk), and saves a screenshot per step. Run by scripts/e2e-editors:
//   CODER_E2E_URL (code-server URL with ?folder=), CODER_E2E_WS (the workspace),
//   CODER_E2E_ARTIFACTS (screenshots), CODER_E2E_CACHE (holds node_modules/playwright-core)
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { linkSteps } from './vscode_e2e_links.mjs';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (run scripts/e2e-editors)`);
  return v;
};
const URL = env('CODER_E2E_URL');
const WS = env('CODER_E2E_WS');
const ART = env('CODER_E2E_ARTIFACTS');
const require = createRequire(join(env('CODER_E2E_CACHE'), 'node_modules', 'noop.js'));
const { chromium } = require('playwright-core');

const APP = join(WS, 'app.py');
const disk = () => readFileSync(APP, 'utf8');
let shot = 0;
const started = Date.now();
const step = (what) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${what}`);

const browser = await chromium.launch({
  executablePath: process.env.CODER_E2E_CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
});
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
const consoleErrors = [];
page.on('console', (m) => {
  if (m.type() === 'error') consoleErrors.push(m.text());
});

async function screenshot(name) {
  shot += 1;
  const file = join(ART, `${String(shot).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file });
  step(`screenshot ${file}`);
}

async function until(what, fn, timeout = 30000) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    try {
      if (await fn()) return;
    } catch (e) {
      last = e;
    }
    await page.waitForTimeout(200);
  }
  await screenshot(`timeout-${what.replace(/[^a-z0-9]+/gi, '-').slice(0, 40)}`);
  throw new Error(`timed out (${timeout} ms) waiting for ${what}${last ? `: ${last.message}` : ''}`);
}

// CODER_E2E_ONLY=input: only the chat panel and steps 13-14; =link: only step 15 (the
// workspace's script then holds only their turns: tests/editors/vscode_e2e_<only>_script.json)
const ONLY = process.env.CODER_E2E_ONLY ?? '';
if (!['', 'input', 'link'].includes(ONLY)) throw new Error(`CODER_E2E_ONLY=${ONLY}: expected input or link`);
// a 40x30 red PNG (made with Pillow)
const RED_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAACgAAAAeCAIAAADRv8uKAAAALElEQVR4nO3NMQEAAAQAMGTQP5kwKvg8W4HldMeHelnFYrFYLBaLxWKxWHyyHfoBQAOTqpMAAAAASUVORK5CYII=';

// The chat is a webview: an iframe (class "webview") whose document holds another
// iframe (#active-frame) with our HTML.
const chat = page.frameLocator('iframe.webview').frameLocator('iframe#active-frame');
const transcript = chat.locator('#transcript');
const transcriptText = async () => (await transcript.innerText({ timeout: 2000 })) ?? '';

async function send(text) {
  const input = chat.locator('#input');
  await input.click();
  await input.fill(text);
  // close a slash-completion list first (Enter would pick its entry)
  await input.press('Escape');
  await input.fill(text);
  await input.press('Enter');
  step(`sent ${JSON.stringify(text)}`);
}

/** Clicks `button` in the notification toast whose text contains `text`. */
async function clickNotificationButton(text, button, timeout = 30000) {
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: text }).first();
  await until(`a notification "${text}" with "${button}"`, async () => toast.locator('a.monaco-button', { hasText: button }).first().isVisible(), timeout);
  await toast.locator('a.monaco-button', { hasText: button }).first().click();
  step(`clicked "${button}" in the notification "${text}"`);
}

/** The review of an agent edit (contract section 15) in the extension's own diff: the
 * edit is the question; a diff shows what is there against what Coder proposes, and a
 * list holds the changes, each ticked. Unticks the change (the diff's right side drops
 * it), ticks it again (it comes back), then Enter applies the ticked changes. */
async function acceptReview(file, timeout = 30000) {
  const widget = page.locator('.quick-input-widget', { hasText: 'tick the changes to apply' });
  const row = widget.locator('.monaco-list-row', { hasText: `${file}:` }).first();
  const box = row.locator('.quick-input-list-label, .label-name').first(); // a click on the row toggles its tick
  const right = page.locator('.monaco-diff-editor .editor.modified .view-lines').first();
  const rightText = async () => ((await right.innerText({ timeout: 2000 })) ?? '').replace(/\u00a0/g, ' ');
  await until(`the review of ${file} (its diff and the list of changes)`, async () => (await row.isVisible()) && (await right.isVisible()), timeout);
  await until(`the review tab of ${file}`, async () => page.locator('.tabs-container .tab', { hasText: `${file}:` }).first().isVisible(), 5000);
  await screenshot(`review-${file}`);
  const proposed = await rightText();
  await box.click();
  await until('the unticked change gone from the right side', async () => (await rightText()) !== proposed, 10000);
  await screenshot(`review-${file}-rejected`);
  await box.click();
  await until('the change back on the right side', async () => (await rightText()) === proposed, 10000);
  await widget.locator('input.input, .quick-input-box input').first().press('Enter');
  step(`unticked then ticked the change to ${file} in the review, and applied it`);
  await until('the review to close', async () => !(await row.isVisible()) && !(await right.isVisible()), 10000);
}

/** The visible text of the editor of app.py (Monaco renders it in .view-lines). */
const editorText = async () => (await page.locator('.editor-instance .monaco-editor .view-lines').first().innerText()).replace(/\u00a0/g, ' ');

/** Steps 13-14 (section 19): the context chip, a pasted image, an ask_user question. */
async function inputSteps() {
  // 13. the editor's context and a pasted image (contract section 19): the chat shows
  // the active file as a removable chip and the pasted image as another; both go with
  // the input (the image stored once by hash beside the session log)
  const chips = chat.locator('#chips .chip');
  await until('the context chip naming the active file', async () => /\.py/.test((await chips.first().innerText()) ?? ''), 10000);
  await chat.locator('#input').evaluate((el, b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const data = new DataTransfer();
    data.items.add(new File([bytes], 'shot.png', { type: 'image/png' }));
    el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }, RED_PNG);
  await until('the pasted image as a chip', async () => (await chat.locator('#chips .chip', { hasText: 'shot.png' }).count()) === 1, 10000);
  await screenshot('pasted-image');
  await send('what is in this picture?');
  await until('the answer about the image', async () => (await transcriptText()).includes('A red square, 40 by 30.'), 30000);
  if (await chat.locator('#chips .chip', { hasText: 'shot.png' }).count()) throw new Error('the image chip stayed after sending');
  const blobs = readdirSync(join(WS, '.coder', 'blobs')).filter((f) => f.endsWith('.png'));
  if (blobs.length !== 1) throw new Error(`expected the pasted image stored once in .coder/blobs, found ${JSON.stringify(blobs)}`);
  step(`the pasted image went with the input (stored as ${blobs[0]})`);

  // 14. the model's ask_user question: a quick pick with the options and "Other…";
  // picking one answers the model, which goes on
  await send('/init');
  const pick = page.locator('.quick-input-widget', { hasText: 'Coder asks (1/1) [Tests]: Which test runner should AGENTS.md name?' });
  await until('the ask_user quick pick', async () => pick.isVisible(), 30000);
  const labels = await pick.locator('.monaco-list-row').allInnerTexts();
  if (!labels.some((l) => l.includes('Other…'))) throw new Error(`no "Other…" in the quick pick: ${JSON.stringify(labels)}`);
  await screenshot('ask-user');
  await pick.locator('.monaco-list-row', { hasText: 'unittest' }).first().click();
  await until('the answer after the question', async () => (await transcriptText()).includes('AGENTS.md will name the runner you chose.'), 30000);
  const askCall = chat.locator('.entry.tool', { hasText: 'ask_user' }).last();
  await askCall.locator('summary').click();
  await until('the ask_user call showing the answer', async () => /→ unittest/.test(await askCall.innerText()), 5000);
  step('answered the ask_user question in a quick pick; the model got "unittest"');
  await screenshot('ask-user-answered');
}

try {
  step(`opening ${URL}`);
  await page.goto(URL, { waitUntil: 'domcontentloaded' });
  await page.locator('.monaco-workbench').waitFor({ timeout: 60000 });
  await page.locator('.explorer-folders-view, .explorer-viewlet').first().waitFor({ timeout: 60000 });
  await screenshot('workbench');

  // app.py in an editor (the code action needs it open)
  await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'app.py' }).first().click();
  await until('app.py in an editor', async () => (await editorText()).includes('return a - b'));
  step('app.py is open');

  // 1. the chat panel: its activity-bar icon appears once the extension is registered
  const coderIcon = page.locator('.activitybar .action-item a[aria-label^="Coder"]').first();
  await coderIcon.waitFor({ state: 'visible', timeout: 90000 });
  await coderIcon.click();
  await chat.locator('#input').waitFor({ state: 'visible', timeout: 60000 });
  await screenshot('chat-open');

  // 1b. no coder-ls anywhere: the extension makes its own environment from the .vsix, with
  // progress (its notification may already be gone on a fast machine: then the chat works)
  const setup = page.locator('.notifications-toasts .notification-toast', { hasText: 'setting up coder-ls' }).first();
  if (await setup.waitFor({ state: 'visible', timeout: 20000 }).then(() => true, () => false)) {
    await screenshot('own-server-setup');
    step('the extension is setting up its own coder-ls (progress notification)');
    await setup.waitFor({ state: 'hidden', timeout: 180000 });
    step('its own coder-ls is ready');
  }

  if (!ONLY) {
  // 2. a slash command (waits for the server to start: the first command may take a while)
  await send('/help');
  await until('the /help reply', async () => {
    const t = await transcriptText();
    return t.includes('/undo') && t.includes('/model');
  }, 180000);
  await screenshot('help');

  // 3. a shell command
  await send('!echo hi');
  await until('the output of !echo hi', async () => {
    const shells = await chat.locator('.entry.shell').allInnerTexts();
    return shells.some((s) => s.includes('$ echo hi') && /\nhi\n/.test(`\n${s}\n`) && /exit 0|✓|0\b/.test(s));
  });
  await screenshot('echo-hi');

  // 4. an agent edit: the scripted model edits app.py, the approval is accepted
  await send('add() returns the wrong result, fix it');
  await acceptReview('app.py');
  await until('the edit and the final answer in the transcript', async () => {
    const t = await transcriptText();
    return t.includes('Fixed:') && (await chat.locator('.entry.edit').count()) >= 1;
  });
  await until('the editor to show the fix', async () => (await editorText()).includes('return a + b'));
  await until('the fix on disk (saved by coder.saveEditedFiles)', async () => disk().includes('return a + b'));
  await screenshot('agent-edit');

  // 5. /undo: the file goes back, the editor reloads it
  await send('/undo');
  await until('the /undo reply', async () => (await transcriptText()).includes('Undid submission'));
  await until('app.py back on disk', async () => disk().includes('return a - b'));
  await until('the editor to show the old text', async () => (await editorText()).includes('return a - b'));
  await screenshot('undo');

  // 6. Cancel of a running shell command in the extension's Cancel notification
  await send('!sleep 30');
  const cancelStart = Date.now();
  await clickNotificationButton('Coder', 'Cancel', 20000);
  await until('the cancelled shell in the transcript', async () => {
    const t = await transcriptText();
    return t.includes('$ sleep 30') && /cancelled/i.test(t);
  }, 20000);
  const cancelSeconds = (Date.now() - cancelStart) / 1000;
  if (cancelSeconds > 15) throw new Error(`the cancel took ${cancelSeconds}s: the sleep ran to its end`);
  step(`cancelled after ${cancelSeconds.toFixed(1)}s`);
  await screenshot('cancelled');

  // 7. the "Coder: Fix" code action on `return a - b` (selected: Fix needs a range or a diagnostic)
  await page.locator('.editor-instance .view-line', { hasText: 'return a - b' }).first().click();
  await page.keyboard.press('End');
  await page.keyboard.press('Shift+Home');
  await page.keyboard.press('Control+.');
  const action = page.locator('.action-widget .monaco-list-row', { hasText: 'Coder: Fix' }).first();
  await action.waitFor({ state: 'visible', timeout: 20000 });
  await screenshot('code-actions');
  // the action widget runs the focused row on Enter (pointer events on it time out here)
  for (let i = 0; i < 6 && !/\bfocused\b/.test((await action.getAttribute('class')) ?? ''); i++) {
    await page.keyboard.press('ArrowDown');
  }
  await until('"Coder: Fix" focused', async () => /focused|selected/.test((await action.getAttribute('class')) ?? ''), 5000);
  await page.keyboard.press('Enter');
  step('ran "Coder: Fix"');
  await acceptReview('app.py');
  await until('the code action fix on disk', async () => disk().includes('return a + b'));
  await until('the editor to show the code action fix', async () => (await editorText()).includes('return a + b'));
  await until('the code action answer in the transcript', async () => (await transcriptText()).includes('Code action fix applied.'));
  await screenshot('code-action-fix');

  // 8. an edit of a file that is not open: the server writes it (editApplied onDisk)
  await send('util.py needs a docstring');
  await acceptReview('util.py');
  await until('the util.py answer in the transcript', async () => (await transcriptText()).includes('util.py documented.'));
  await until('util.py on disk', async () => readFileSync(join(WS, 'util.py'), 'utf8').includes('Twice x.'));
  // VS Code loaded util.py (in an editor) to apply the edit: that copy must not stay
  // dirty (the Explorer's badge counts dirty files) and must not be saved over the server's
  const dirtyBadge = async () =>
    (await page.locator('.activitybar .action-item a[aria-label^="Explorer"] ~ .badge .badge-content').first().textContent({ timeout: 1000 }).catch(() => '')) || '';
  await until('no dirty copy of util.py (Explorer badge empty)', async () => (await dirtyBadge()).trim() === '', 15000);
  if (!readFileSync(join(WS, 'util.py'), 'utf8').includes('Twice x.')) throw new Error('util.py lost the edit');
  await screenshot('on-disk-edit');

  // 9. "Coder: Revert agent change" on the line the code action's fix wrote
  await page.locator('.tabs-container .tab', { hasText: 'app.py' }).first().click();
  await until('app.py showing the fix', async () => (await editorText()).includes('return a + b'));
  await page.locator('.editor-instance .view-line', { hasText: 'return a + b' }).first().click();
  await page.keyboard.press('Control+.');
  const revert = page.locator('.action-widget .monaco-list-row', { hasText: 'Coder: Revert agent change' }).first();
  await revert.waitFor({ state: 'visible', timeout: 20000 });
  await screenshot('revert-action');
  for (let i = 0; i < 8 && !/\bfocused\b/.test((await revert.getAttribute('class')) ?? ''); i++) {
    await page.keyboard.press('ArrowDown');
  }
  await until('"Coder: Revert agent change" focused', async () => /focused|selected/.test((await revert.getAttribute('class')) ?? ''), 5000);
  await page.keyboard.press('Enter');
  await until('the editor to show the line before the fix', async () => (await editorText()).includes('return a - b'));
  step('reverted the fix from the light bulb');
  await screenshot('reverted');

  // 10. a subagent, nested under its task call, stopped by its own Stop; the turn goes on
  await send('ask a helper');
  const subStop = chat.locator('.entry.subagent .stop-agent').first();
  await until('the running subagent with its Stop', async () => subStop.isVisible(), 30000);
  const nested = await chat.locator('.entry.tool + .entry.subagent.nested').count();
  if (nested < 1) throw new Error('the subagent is not right under its task call');
  await screenshot('subagent-running');
  await subStop.click();
  await until('the subagent cancelled and the main answer', async () => {
    const t = await transcriptText();
    return t.includes('going on alone') && (await chat.locator('.entry.subagent.cancelled').count()) === 1;
  }, 20000);
  step('stopped one subagent; the main agent went on');
  await screenshot('subagent-stopped');

  // 11. a /task: the Tasks view shows it with its steps, done
  await send('/task write notes on the repo');
  await until('the task report in the transcript', async () => (await transcriptText()).includes('report.md'), 60000);
  const taskRow = page.locator('.monaco-list-row', { hasText: 'write notes on the repo' }).first();
  await until('the task in the Tasks view, completed 2/2 100%', async () => /completed · 2\/2 · 100%/.test((await taskRow.innerText()) ?? ''), 20000);
  for (const title of ['Scan the modules', 'Write the notes']) {
    const row = page.locator('.monaco-list-row', { hasText: title }).first();
    await until(`the step "${title}" in the Tasks view`, async () => /completed/.test((await row.innerText()) ?? ''), 10000);
  }
  step('the Tasks view shows the task and its two steps, completed');
  await screenshot('tasks-view');

  // 12. per-change review: of the two changes proposed to util.py, the second is
  // rejected in the list; only the first lands, and the agent is told
  await send('type util.py and add triple');
  const review = page.locator('.quick-input-widget', { hasText: 'tick the changes to apply' });
  const rows = review.locator('.monaco-list-row', { hasText: 'util.py:' });
  await until('the review of util.py with two changes', async () => (await rows.count()) === 2, 30000);
  await rows.nth(1).locator('.quick-input-list-label, .label-name').first().click();
  await until('the second change unticked (1 Selected)', async () => /1 Selected/.test(await review.innerText()), 10000);
  await screenshot('review-one-rejected');
  await review.locator('input.input, .quick-input-box input').first().press('Enter');
  await until('the agent answer after the partial review', async () => (await transcriptText()).includes('Done with util.py.'), 20000);
  const util = () => readFileSync(join(WS, 'util.py'), 'utf8');
  await until('the accepted change on disk', async () => util().includes('def double(x: int) -> int:'), 10000);
  if (util().includes('triple')) throw new Error(`the rejected change landed:\n${util()}`);
  const writeCall = chat.locator('.entry.tool', { hasText: 'util.py' }).last();
  await writeCall.locator('summary').click(); // open it: the output says what was rejected
  await until('the write call saying what was applied and rejected', async () => /rejected/i.test(await writeCall.innerText()), 5000);
  const told = await writeCall.innerText();
  step(`only the accepted change landed in util.py; the write call reads: ${told.split('\n')[0]}`);
  await screenshot('review-partial-applied');

  }
  if (!ONLY || ONLY === 'input') await inputSteps();
  // 15. command: links (model output, a README) that try `!touch pwned`, `rm victim`, /trust
  if (!ONLY || ONLY === 'link') await linkSteps({ page, chat, transcriptText, send, until, screenshot, step, WS });
  step('all steps passed');
} catch (e) {
  console.error(`e2e failed: ${e.stack || e}`);
  try {
    await screenshot('failure');
    console.error(`transcript:\n${await transcriptText()}`);
  } catch {
    /* the page is gone */
  }
  if (consoleErrors.length) console.error(`browser console errors (last 10):\n${consoleErrors.slice(-10).join('\n')}`);
  await browser.close();
  process.exit(1);
}
await browser.close();
