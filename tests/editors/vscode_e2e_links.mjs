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
//   or without, and the server refuses the shell lines and /trust from a link. A fourth,
//   `command:coderLs.review.apply` (the extension's own command), must not answer the
//   edit review waiting in another editor (src/review.ts acts on the review shown).
// The same `!touch pwned`, typed in the chat, runs.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The links the scripted model puts in its answer and in its bash command
 * (tests/editors/vscode_e2e_link_script.json holds the same URIs). */
export const LINKS = {
  input: `command:coder.input?${encodeURIComponent(JSON.stringify({ text: '!touch pwned' }))}`,
  shell: `command:coder.shell?${encodeURIComponent(JSON.stringify({ command: 'rm victim' }))}`,
  trust: 'command:coder.trust', // no arguments: a click is not the user's typing either
  apply: 'command:coderLs.review.apply', // the extension's own: answers a pending edit review
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
  writeFileSync(join(WS, 'README.md'), `# Tidy\n\nSome text.\n\n[clean up](${LINKS.input})\n\n[tidy](${LINKS.shell})\n\n[trust](${LINKS.trust})\n\n[apply](${LINKS.apply})\n`);
  await page.keyboard.press('Control+P');
  await page.keyboard.type('README.md');
  await until('README.md in quick open', async () => page.locator('.quick-input-widget .monaco-list-row', { hasText: 'README.md' }).first().isVisible(), 10000);
  await page.keyboard.press('Enter');
  await until('README.md in an editor', async () => page.locator('.tabs-container .tab.active', { hasText: 'README.md' }).isVisible(), 10000);
  /** Ctrl+click on `needle` in the visible editor, as a user does it: Ctrl held, the
   * pointer onto the text (Monaco arms the link on that move), press and release. The
   * point is that of the needle's middle character (Monaco splits a line into spans as it
   * highlights it). The pointer leaves first, closing the last hover (not Escape: it would
   * close the notifications too). */
  const ctrlClick = async (needle) => {
    // VS Code drops a toast when more than 3 were added within 800 ms (its spam protection,
    // NotificationsToasts.SPAM_PROTECTION); a run's progress and its refusal are two, so
    // the clicks are spaced as a user's would be, or a later refusal shows only in the
    // notification centre and the check below flakes
    await page.waitForTimeout(900);
    const line = page.locator('.editor-instance .view-line', { hasText: needle }).filter({ visible: true }).last();
    const point = await line.evaluate((el, n) => {
      const at = (el.textContent ?? '').indexOf(n) + Math.floor(n.length / 2);
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      let seen = 0;
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const len = node.textContent?.length ?? 0;
        if (at >= seen && at < seen + len) {
          const r = document.createRange();
          r.setStart(node, at - seen);
          r.setEnd(node, at - seen + 1);
          const b = r.getBoundingClientRect();
          return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
        }
        seen += len;
      }
      return null;
    }, needle, { timeout: 2000 });
    if (!point) throw new Error(`"${needle}" is not on screen`); // a missed click must not pass
    await page.mouse.move(700, 600);
    await page.keyboard.down('Control');
    await page.mouse.move(point.x, point.y, { steps: 3 });
    await page.mouse.down();
    await page.mouse.up();
    await page.keyboard.up('Control');
    await page.waitForTimeout(700);
  };
  const refusal = (line) => `${line}: from a link (not typed by you) (origin 'link'), ${refusedShell}`;
  const outcomes = async () => {
    const text = await transcriptText();
    return {
      input: text.includes(refusal("'touch pwned'")) || existsSync(pwned),
      shell: text.includes(refusal("'rm victim'")) || !existsSync(victim),
      trust: text.includes(refusedTrust) || text.includes('Trusted this workspace'),
    };
  };
  const toasts = { input: "'touch pwned': from a link", shell: "'rm victim': from a link", trust: refusedTrust };
  for (const [key, uri] of [['input', LINKS.input], ['shell', LINKS.shell], ['trust', LINKS.trust]]) {
    // the document links come from the Markdown language server once it has the file
    await until(`the ${key} link run by Ctrl+click (${uri.slice(0, 40)}…)`, async () => {
      if ((await outcomes())[key]) return true;
      await ctrlClick(uri.split('?')[0]);
      return (await outcomes())[key];
    }, 20000);
    step(`Ctrl+clicked the ${key} link in README.md`);
    // each refusal's notification, looked for as it comes: VS Code shows only a few toasts
    // at once and the approval of 15b still waits, so a later one can hide an earlier one
    const text = toasts[key];
    await until(`a notification "${text}"`, async () => page.locator('.notifications-toasts .notification-toast', { hasText: text }).first().isVisible(), 5000);
  }
  await screenshot('link-clicked');
  if ((await transcriptText()).includes('Trusted this workspace')) gaveWay.push('a command:coder.trust link trusted the workspace');
  if (existsSync(pwned)) gaveWay.push('a command:coder.input link ran `!touch pwned`');
  if (!existsSync(victim)) gaveWay.push('a command:coder.shell link ran `rm victim`');
  if (gaveWay.length) throw new Error(`links: ${gaveWay.join('; ')}`);
  await screenshot('link-refused');
  step('the links were refused: pwned absent, victim kept, the workspace not trusted');

  // 15d. nor can a link answer an edit review: the model writes `victim`; while its
  // review waits (the list hidden, the diff and its notification kept), the README's
  // `command:coderLs.review.apply` is Ctrl+clicked; the file stays as it is
  await send('rewrite the victim file');
  const list = page.locator('.quick-input-widget', { hasText: 'tick the changes to apply' });
  await until('the review of victim', async () => list.isVisible(), 30000);
  await page.keyboard.press('Escape'); // hides the list; the review still waits
  await page.locator('.tabs-container .tab', { hasText: 'README.md' }).first().click();
  await until('README.md in front', async () => page.locator('.tabs-container .tab.active', { hasText: 'README.md' }).isVisible(), 5000);
  // Nothing shows when the apply link is refused: a /trust link Ctrl+clicked right after
  // it, refused once more, shows the clicks land (the README's links are live)
  const victimChanged = () => readFileSync(victim, 'utf8') !== 'keep me\n';
  const trustRefusals = async () => (await transcriptText()).split(refusedTrust).length - 1;
  const before = await trustRefusals();
  await until('the apply link Ctrl+clicked, and a /trust link after it refused', async () => {
    if (victimChanged()) return true;
    await ctrlClick(LINKS.apply);
    await ctrlClick(LINKS.trust); // (not on screen once an applied edit opened victim: tried again)
    return (await trustRefusals()) > before;
  }, 20000);
  await page.waitForTimeout(1000);
  step('Ctrl+clicked the apply link in README.md while the review waited');
  if (victimChanged()) gaveWay.push('a command:coderLs.review.apply link applied the agent\'s edit of victim');
  if (gaveWay.length) throw new Error(`links: ${gaveWay.join('; ')}`);
  // the review still waits (the chat names it): the chat's Reject rejects it
  const waiting = chat.locator('#review .review-row', { hasText: 'victim' });
  await until('the review still waiting (named in the chat)', async () => waiting.isVisible(), 5000);
  await waiting.locator('button[data-review="reject"]').click();
  await until('the answer after the rejected edit', async () => (await transcriptText()).includes('Left victim alone.'), 30000);
  if (readFileSync(victim, 'utf8') !== 'keep me\n') throw new Error('victim changed although its review was rejected');
  await screenshot('review-kept-from-link');
  step('the link did not answer the review; the user rejected it');

  // 15e. the same line typed in the chat runs
  await send('!touch pwned');
  await until('pwned created by the typed !touch pwned', async () => existsSync(pwned), 20000);
  step('the typed `!touch pwned` ran');
  await screenshot('typed-ran');
}
