// Who wrote these lines, in a real VS Code (contract section 23, issue 34): after the agent's
// edit of shapes.py (reviewed and applied in the editor), the language client shows the
// server's code lens over the line it wrote, naming the prompt; a click on it reverts that
// hunk in the buffer (`coder.revertHunk`), and the lens goes (`workspace/codeLens/refresh`).
// Run by vscode_e2e.mjs with CODER_E2E_ONLY=lens (its turns: vscode_e2e_lens_script.json).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { quickOpen } from './vscode_e2e_chat.mjs';

const BEFORE = 'def area(w, h):\n    return w + h\n\n\ndef half(x):\n    return x / 2\n';
const PROMPT = 'fix area in shapes.py';
const TITLE = `Coder: "${PROMPT}" · revert`;

export async function lensSteps({ page, send, until, screenshot, step, WS, transcriptText, acceptReview }) {
  writeFileSync(join(WS, 'shapes.py'), BEFORE);
  // after the full scenario's plan step the session runs in the preset the plan was approved
  // in (auto-edit, no review): back to balanced, where the edit is reviewed in the editor
  await send('/permissions balanced');
  await until('the preset back to balanced', async () => (await transcriptText()).includes('Permissions set to balanced.'), 15000);
  // open shapes.py: the agent's edit lands in its buffer
  await quickOpen(page, until, 'shapes.py');
  await until('the shapes.py tab', async () => page.locator('.tabs-container .tab.active', { hasText: 'shapes.py' }).isVisible(), 15000);
  const lines = page.locator('.editor-instance .monaco-editor .view-lines').first();
  const text = async () => ((await lines.innerText({ timeout: 2000 })) ?? '').replace(/\u00a0/g, ' ');

  await send(PROMPT);
  await acceptReview('shapes.py', 60000);
  await until('the answer', async () => (await transcriptText()).includes('Fixed area: it multiplies now.'), 30000);
  await page.locator('.tabs-container .tab', { hasText: 'shapes.py' }).first().click();
  await until('the agent line in the buffer', async () => (await text()).includes('return w * h'), 15000);

  // the lens over the agent's line names the prompt
  const lens = page.locator('.monaco-editor .codelens-decoration a', { hasText: TITLE }).first();
  await until(`the code lens ${TITLE}`, async () => lens.isVisible(), 30000);
  // the lens may be drawn again (a codeLens refresh) between two looks: measure until both boxes are there
  let boxes = {};
  await until("the lens over the agent's line", async () => {
    const lensBox = await lens.boundingBox();
    const lineBox = await page.locator('.monaco-editor .view-line', { hasText: 'return w * h' }).first().boundingBox();
    boxes = { lensBox, lineBox };
    return !!lensBox && !!lineBox && lensBox.y <= lineBox.y;
  }, 15000).catch((e) => { throw new Error(`${e.message}: ${JSON.stringify(boxes)}`); });
  step(`the lens "${TITLE}" shows over the line the agent wrote`);
  await screenshot('lens-over-agent-line');

  // a click reverts that hunk in the buffer, and the lens goes
  await lens.click();
  await until('the hunk reverted in the buffer', async () => {
    const now = await text();
    return now.includes('return w + h') && !now.includes('return w * h');
  }, 30000);
  await until('the lens gone after the revert', async () => !(await lens.isVisible()), 30000);
  step('clicking the lens reverted the agent hunk in the buffer; the lens went');
  await screenshot('lens-reverted');
}
