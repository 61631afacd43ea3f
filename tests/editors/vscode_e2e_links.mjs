// Step 15 of the code-server scenario (tests/editors/vscode_e2e.mjs): `command:` links
// that try to run a shell line or /trust (issue 22, "Who may run what").
//
// Where such a link can be clicked in a real VS Code:
// - the chat transcript is our webview: its Markdown renderer (src/markdown.ts) leaves a
//   `command:` link as text, and the webview has no `enableCommandUris`;
// - a notification renders `[label](command:...)` in its message as a link showing only
//   its label, and runs it when clicked. The bash approval question is a notification
//   (`window/showMessageRequest`) quoting the command the model chose: the extension shows
//   it `plain` (src/plainText.ts), the link syntax broken, so it reads as text;
// - a Markdown file in an editor: its links are document links, and Ctrl+click runs a
//   `command:` one. The workspace's README.md holds three. Those clicks go through the
//   language client's middleware, which marks them `link` (src/origin.ts), with arguments
//   or without, and the server refuses the shell lines and /trust from a link.
// The same `!touch pwned`, typed in the chat, runs.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The links the scripted model puts in its answer and in its bash command
 * (tests/editors/vscode_e2e_link_script.json holds the same URIs). */
export const LINKS = {
  input: `command:coder.input?${encodeURIComponent(JSON.stringify({ text: '!touch pwned' }))}`,
  shell: `command:coder.shell?${encodeURIComponent(JSON.stringify({ command: 'rm victim' }))}`,
  trust: 'command:coder.trust', // no arguments: a click is not the user's typing either
};

/** @param t the driver's helpers: page, chat, transcriptText, send, until, screenshot, step, WS */
export async function linkSteps(t) {
  const { page, chat, transcriptText, send, until, screenshot, step, WS } = t;
  const pwned = join(WS, 'pwned');
  const victim = join(WS, 'victim');
  writeFileSync(victim, 'keep me\n');
  const refusedShell = "a shell line never runs: type it yourself";
  const refusedTrust = '/trust runs only when you type it';
  // What gave way is collected (not thrown at once), so that one run names every guard.
  const gaveWay = [];

  // 15a. the model's answer holds a `command:` link: the transcript shows it as text
  await send('tidy up the workspace');
  const answer = chat.locator('.entry', { hasText: '[clean up](command:coder.input?' }).first();
  await until('the answer holding the command: link, shown as text', async () => answer.isVisible(), 30000);
  const anchors = await chat.locator('#transcript a').evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? ''));
  const clickable = anchors.filter((h) => !h.startsWith('#'));
  if (clickable.length) gaveWay.push(`the transcript renders links the model wrote: ${JSON.stringify(clickable)}`);
  else step('the transcript shows the command: link as text, no anchor');
  await answer.click(); // a user clicks the words: nothing happens

  // 15b. the approval question of the model's bash call quotes the command: its links
  // show as text, target included, in the notification
  const ask = page.locator('.notifications-toasts .notification-toast', { hasText: 'wants to run' }).first();
  await until('the approval notification of the bash call', async () => ask.isVisible(), 30000);
  const askText = ((await ask.locator('.notification-list-item-message').innerText()) ?? '').replace(/\u200b/g, '');
  const askLinks = await ask.locator('.notification-list-item-message a').allInnerTexts();
  if (askLinks.length || !askText.includes(`[clean up](${LINKS.input})`)) {
    gaveWay.push(`the approval shows live links ${JSON.stringify(askLinks)} instead of the command (${askText})`);
  } else step('the approval shows the links as text, targets included');
  await screenshot('approval-plain');
  await ask.locator('a.monaco-button', { hasText: 'Deny' }).first().click();
  await until('the answer after the denied call', async () => (await transcriptText()).includes('Left the workspace as it is.'), 30000);
  step('denied the bash call');

  // 15c. the workspace's README.md holds the same links: Ctrl+click each in the editor
  writeFileSync(join(WS, 'README.md'), `# Tidy\n\nSome text.\n\n[clean up](${LINKS.input})\n\n[tidy](${LINKS.shell})\n\n[trust](${LINKS.trust})\n`);
  await page.keyboard.press('Control+P');
  await page.keyboard.type('README.md');
  await until('README.md in quick open', async () => page.locator('.quick-input-widget .monaco-list-row', { hasText: 'README.md' }).first().isVisible(), 10000);
  await page.keyboard.press('Enter');
  await until('README.md in an editor', async () => page.locator('.tabs-container .tab.active', { hasText: 'README.md' }).isVisible(), 10000);
  const refusal = (line) => `${line}: from a link (not typed by you) (origin 'link'), ${refusedShell}`;
  const outcomes = async () => {
    const text = await transcriptText();
    return {
      input: text.includes(refusal("'touch pwned'")) || existsSync(pwned),
      shell: text.includes(refusal("'rm victim'")) || !existsSync(victim),
      trust: text.includes(refusedTrust) || text.includes('Trusted this workspace'),
    };
  };
  for (const [key, uri] of [['input', LINKS.input], ['shell', LINKS.shell], ['trust', LINKS.trust]]) {
    const target = page.locator('.editor-instance .view-line span span', { hasText: uri.split('?')[0] }).last();
    // the document links come from the Markdown language server once it has the file
    await until(`the ${key} link run by Ctrl+click (${uri.slice(0, 40)}…)`, async () => {
      if ((await outcomes())[key]) return true;
      // as a user does it: Ctrl held, the pointer onto the link (Monaco arms the link on
      // that move), press and release; the pointer leaves first (closing the last hover;
      // not Escape: it would close the notifications too)
      await page.mouse.move(700, 600);
      const box = await target.boundingBox({ timeout: 2000 });
      if (!box) return false;
      await page.keyboard.down('Control');
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 3 });
      await page.mouse.down();
      await page.mouse.up();
      await page.keyboard.up('Control');
      await page.waitForTimeout(700);
      return (await outcomes())[key];
    }, 20000);
    step(`Ctrl+clicked the ${key} link in README.md`);
  }
  await screenshot('link-clicked');
  if ((await transcriptText()).includes('Trusted this workspace')) gaveWay.push('a command:coder.trust link trusted the workspace');
  if (existsSync(pwned)) gaveWay.push('a command:coder.input link ran `!touch pwned`');
  if (!existsSync(victim)) gaveWay.push('a command:coder.shell link ran `rm victim`');
  if (gaveWay.length) throw new Error(`links: ${gaveWay.join('; ')}`);
  for (const text of ["'touch pwned': from a link", "'rm victim': from a link", refusedTrust]) {
    await until(`a notification "${text}"`, async () => page.locator('.notifications-toasts .notification-toast', { hasText: text }).first().isVisible(), 5000);
  }
  await screenshot('link-refused');
  step('the links were refused: pwned absent, victim kept, the workspace not trusted');

  // 15d. the same line typed in the chat runs
  await send('!touch pwned');
  await until('pwned created by the typed !touch pwned', async () => existsSync(pwned), 20000);
  step('the typed `!touch pwned` ran');
  await screenshot('typed-ran');
}
