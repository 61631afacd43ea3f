// Step 15 of the code-server scenario (tests/editors/vscode_e2e.mjs): links in model
// output that try to run a shell line or /trust (issue 22, "Who may run what").
//
// Where a link can reach `coder.*` in a real VS Code:
// - the chat transcript is our webview: its Markdown renderer (src/markdown.ts) leaves a
//   `command:` link as text, and the webview has no `enableCommandUris`: not clickable;
// - a notification: VS Code renders `[label](command:...)` in a notification's message as
//   a link and runs it with `allowCommands` when clicked. The bash approval question is a
//   notification (`window/showMessageRequest`) quoting the command the model chose, so
//   model output reaches it. Those clicks go through the language client's middleware,
//   which marks them `link` (src/origin.ts), and the server refuses the shell lines and
//   /trust from a link.
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

  // 15a. the model's answer holds a `command:` link: the transcript shows it as text
  await send('tidy up the workspace');
  const answer = chat.locator('.entry', { hasText: '[clean up](command:coder.input?' }).first();
  await until('the answer holding the command: link, shown as text', async () => answer.isVisible(), 30000);
  const anchors = await chat.locator('#transcript a').evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? ''));
  const clickable = anchors.filter((h) => !h.startsWith('#'));
  if (clickable.length) throw new Error(`the transcript renders links the model wrote: ${JSON.stringify(clickable)}`);
  await answer.click(); // a user clicks the words: nothing happens
  step('the transcript shows the command: link as text, no anchor');

  // 15b. the approval question of the model's bash call is a notification quoting the
  // command: VS Code renders the links in it, and a click runs them
  const ask = page.locator('.notifications-toasts .notification-toast', { hasText: 'wants to run' }).first();
  await until('the approval notification of the bash call', async () => ask.isVisible(), 30000);
  for (const [label, uri] of [['clean up', LINKS.input], ['tidy', LINKS.shell], ['trust', LINKS.trust]]) {
    const a = ask.locator('a', { hasText: label }).first();
    await until(`the "${label}" link in the approval notification`, async () => a.isVisible(), 5000);
    // VS Code shows the target as the link's title: it must be the command: URI itself
    const target = `${(await a.getAttribute('href')) ?? ''} ${(await a.getAttribute('title')) ?? ''}`;
    if (!target.includes(uri.split('?')[0])) throw new Error(`the "${label}" link points at ${target}, not ${uri}`);
    await a.click();
    step(`clicked the "${label}" link (${uri.slice(0, 40)}…) in the notification`);
  }
  await screenshot('link-clicked');

  // /trust is immediate: answered at once, refused (a click is not the user's typing)
  await until('/trust from the link refused, or run', async () => {
    const text = await transcriptText();
    return text.includes(refusedTrust) || text.includes('Trusted this workspace');
  }, 15000);
  if ((await transcriptText()).includes('Trusted this workspace')) throw new Error('a command:coder.trust link trusted the workspace');
  const trustToast = page.locator('.notifications-toasts .notification-toast', { hasText: refusedTrust }).first();
  await until('the /trust refusal in a notification', async () => trustToast.isVisible(), 5000);
  step('/trust from the link refused');

  // the shell lines wait behind the turn: Deny the bash call, the turn ends, then they
  // are taken up and refused
  await ask.locator('a.monaco-button', { hasText: 'Deny' }).first().click();
  step('denied the bash call');
  await until('the answer after the denied call', async () => (await transcriptText()).includes('Left the workspace as it is.'), 30000);
  await until('the two shell lines from links refused, or run', async () => {
    const text = await transcriptText();
    return (text.split(refusedShell).length - 1 >= 2) || existsSync(pwned) || !existsSync(victim);
  }, 20000);
  if (existsSync(pwned)) throw new Error('a command:coder.input link ran `!touch pwned`');
  if (!existsSync(victim)) throw new Error('a command:coder.shell link ran `rm victim`');
  const text = await transcriptText();
  for (const line of ["'touch pwned'", "'rm victim'"]) {
    if (!text.includes(`${line}: from a link (not typed by you) (origin 'link'), ${refusedShell}`)) {
      throw new Error(`no refusal of ${line} from the link in the transcript`);
    }
  }
  await until('a refusal notification', async () => page.locator('.notifications-toasts .notification-toast', { hasText: refusedShell }).first().isVisible(), 5000);
  await screenshot('link-refused');
  step('the links were refused: pwned absent, victim kept, the workspace not trusted');

  // 15c. the same line typed in the chat runs
  await send('!touch pwned');
  await until('pwned created by the typed !touch pwned', async () => existsSync(pwned), 20000);
  step('the typed `!touch pwned` ran');
  await screenshot('typed-ran');
}
