// Step 16 of the code-server scenario (tests/editors/vscode_e2e.mjs): working like a daily
// driver (contract section 22, issue 33), as a user sees it in the chat panel.
//
// 16a. plan mode: `/plan <prompt>`; the scripted model reads greet.py and hands over a plan
//      (`exit_plan_mode`); the plan shows with Approve (and its preset), Revise and Reject;
//      nothing is written while planning; Approve in `auto-edit` runs it and the edit lands.
// 16b. a background shell: the model starts a ticker with `bash {background: true}`; `/shells`
//      lists it, running.
// 16c. edit and resend: "Edit and resend" on a past message opens VS Code's input box with
//      its text; the edited text replaces it in the chat and reaches the model (the script's
//      turn for it says `expectUserText`: any other request gets an error, not the reply).
// The model's turns: tests/editors/vscode_e2e_daily_script.json (also the tail of
// vscode_e2e_script.json).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const GREET_BEFORE = 'def greet(name):\n    return "hello " + name\n';

/** @param t the driver's helpers: page, chat, transcriptText, send, until, screenshot, step, WS */
export async function dailySteps(t) {
  await planStep(t);
  await backgroundShellStep(t);
  await editAndResendStep(t);
}

/** Waits until `done()`; meanwhile answers "Allow once" to an approval notification that
 * quotes `what` (the preset and the sandbox may allow the call without asking). */
async function untilAllowingOnce(t, what, label, done, timeout) {
  const ask = t.page.locator('.notifications-toasts .notification-toast', { hasText: what }).first();
  await t.until(label, async () => {
    if (await ask.isVisible().catch(() => false)) {
      await ask.locator('a.monaco-button', { hasText: 'Allow once' }).first().click();
      t.step(`answered "Allow once" to the question about ${what}`);
    }
    return done();
  }, timeout);
}

/** 16a: `/plan`, the plan with its buttons, Approve in auto-edit, the edit on disk. */
async function planStep(t) {
  const { page, chat, transcriptText, send, until, screenshot, step, WS } = t;
  const greet = join(WS, 'greet.py');
  const disk = () => readFileSync(greet, 'utf8');
  writeFileSync(greet, GREET_BEFORE);

  await send('/plan make greet() say Hello with a capital H');
  const plan = chat.locator('#transcript .entry.plan.waiting').last();
  await until('the proposed plan with its buttons', async () => plan.isVisible(), 60000);
  const planText = await plan.innerText();
  for (const want of ['Proposed plan', 'Capitalise the greeting', 'greet.py']) {
    if (!planText.includes(want)) throw new Error(`the plan does not show "${want}": ${planText}`);
  }
  for (const label of ['Approve', 'Revise', 'Reject']) {
    if (!(await plan.locator('button', { hasText: label }).isVisible())) throw new Error(`the plan has no visible ${label} button`);
  }
  const presets = await plan.locator('select[data-plan-mode] option').allInnerTexts();
  if (JSON.stringify(presets) !== JSON.stringify(['balanced', 'auto-edit', 'strict', 'yolo'])) {
    throw new Error(`the presets offered to run the plan in: ${JSON.stringify(presets)}`);
  }
  // planning read the file (its call is in the chat) and wrote nothing
  const said = await chat.locator('#transcript > .entry.tool > summary').allInnerTexts();
  if (!said.some((s) => /Read greet\.py/.test(s))) throw new Error(`no call reads "Read greet.py" in ${JSON.stringify(said)}`);
  if (disk() !== GREET_BEFORE) throw new Error(`greet.py changed while planning:\n${disk()}`);
  step('the plan shows with Approve (4 presets), Revise and Reject; greet.py untouched');
  await screenshot('plan-proposed');

  await plan.locator('select[data-plan-mode]').selectOption('auto-edit');
  await plan.locator('button', { hasText: 'Approve' }).click();
  step('approved the plan in auto-edit');
  await until('the plan marked approved, its buttons gone', async () => {
    const answered = chat.locator('#transcript .entry.plan.answered').last();
    return (await answered.isVisible()) && (await answered.innerText()).includes('Plan approved') && !(await chat.locator('#transcript .entry.plan.waiting').count());
  }, 15000);
  // auto-edit applies the edit without a question; a review (if the editor shows one) is accepted
  const review = page.locator('.quick-input-widget', { hasText: 'tick the changes to apply' });
  await until('the approved run writing greet.py', async () => {
    if (await review.isVisible().catch(() => false)) {
      step('a review of greet.py came: applying it');
      await review.locator('input.input, .quick-input-box input').first().press('Enter');
    }
    return disk().includes('return "Hello, " + name');
  }, 45000);
  await until('the answer of the approved run', async () => (await transcriptText()).includes('Plan carried out: greet() now says Hello.'), 20000);
  // the chat shows what the user did, not the instruction the model was sent
  const users = (await chat.locator('#transcript > .entry.user pre').allInnerTexts()).map((x) => x.trim());
  if (!users.includes('Approved the plan (auto-edit)')) throw new Error(`no "Approved the plan (auto-edit)" among the user's messages: ${JSON.stringify(users)}`);
  if (users.some((x) => x.includes('approved your plan'))) throw new Error(`the model's instruction shows as the user's message: ${JSON.stringify(users)}`);
  const edit = chat.locator('#transcript > .entry.tool.edit', { hasText: 'greet.py' }).last();
  const sentence = (await edit.locator(':scope > summary').innerText()).trim().replace(/\s+/g, ' ');
  if (!/Edited greet\.py \(\+1 −1\)/.test(sentence)) throw new Error(`the approved run's edit reads: ${sentence}`);
  step(`the approved run edited greet.py on disk (${sentence})`);
  await screenshot('plan-approved');
}

/** 16b: a background shell started by the model, listed by `/shells`. */
async function backgroundShellStep(t) {
  const { chat, transcriptText, send, until, screenshot, step } = t;
  await send('start a ticker in the background');
  const answered = async () => (await transcriptText()).includes('The ticker runs in the background.');
  await untilAllowingOnce(t, 'coder-e2e-tick', 'the answer after starting the ticker', answered, 30000);
  // the call's output (folded: its text is there, not shown) names the shell
  const call = chat.locator('#transcript > .entry.tool[data-tool="bash"]', { hasText: 'coder-e2e-tick' }).last();
  const id = /Started in the background as (\S+?)[ .(]/.exec((await call.textContent()) ?? '')?.[1] ?? '';
  step(`the model started background shell ${id}`);

  await send('/shells');
  const listing = chat.locator('#transcript > .entry.reply', { hasText: 'coder-e2e-tick' }).last();
  await until('/shells listing the ticker, running', async () => (await listing.isVisible()) && /\brunning\b/.test(await listing.innerText()), 15000);
  const text = (await listing.innerText()).trim();
  if (!id || !text.includes(id)) throw new Error(`/shells does not name the shell ${id}: ${text}`);
  if (text.includes('No background shells')) throw new Error(`/shells says there are none: ${text}`);
  step(`/shells lists: ${text}`);
  await listing.scrollIntoViewIfNeeded();
  await screenshot('shells-listing');
}

/** 16c: "Edit and resend" on a past message; the new text is sent, the old one goes. */
async function editAndResendStep(t) {
  const { page, chat, transcriptText, send, until, screenshot, step } = t;
  await send('say hello');
  await until('the reply to "say hello"', async () => (await transcriptText()).includes('Hello there.'), 30000);
  const mine = chat.locator('#transcript > .entry.user', { hasText: 'say hello' }).last();
  await mine.hover();
  const button = mine.locator('button.resend', { hasText: 'Edit and resend' });
  await until('"Edit and resend" on the past message', async () => button.isVisible(), 5000);
  await button.click();
  const box = page.locator('.quick-input-widget', { hasText: 'Edit and resend' });
  const input = box.locator('input.input, .quick-input-box input').first();
  await until('the input box holding the message', async () => (await box.isVisible()) && (await input.inputValue()) === 'say hello', 10000);
  await screenshot('resend-input-box');
  await input.fill('say goodbye');
  await input.press('Enter');
  step('edited "say hello" into "say goodbye" and resent it');
  // the script's turn for it expects "say goodbye" in the request: the reply proves the model got it
  await until('the reply to the resent text', async () => (await transcriptText()).includes('Goodbye, as you asked.'), 30000);
  const users = (await chat.locator('#transcript > .entry.user pre').allInnerTexts()).map((s) => s.trim());
  if (users[users.length - 1] !== 'say goodbye') throw new Error(`the last message in the chat is not the resent text: ${JSON.stringify(users)}`);
  if (users.includes('say hello')) throw new Error(`the replaced message stayed in the chat: ${JSON.stringify(users)}`);
  const text = await transcriptText();
  if (text.includes('Hello there.')) throw new Error('the reply to the replaced message stayed in the chat');
  if (/expects the user's last message/.test(text)) throw new Error(`the model was not sent the resent text:\n${text}`);
  step(`the chat shows the resent message and the model's reply to it; messages: ${JSON.stringify(users)}`);
  await screenshot('resend-answered');
}
