// The chat judged as users judge the panels they already use (issue 38), in the DOM of the
// real VS Code the scenario drives (tests/editors/vscode_e2e.mjs):
//   1. the transcript speaks the user's words: no absolute workspace path and none of the
//      protocol's names (allowOnce, deny, completed, ...) in what the chat says itself
//      (the user's input, the model's answers and the commands' own output are theirs);
//      tool calls as sentences with their outcome;
//   2. one inline diff per edit, with the review's outcome per hunk;
//   3. a layout that holds at sidebar widths 240, 320 and 480 px: every button's box
//      inside the panel, the input's buttons on screen, nothing wider than the panel;
//   4. at most one Coder notification while the chat is open (`watchToasts`);
//   5. a code block's Copy and Insert.
// CODER_E2E_SOFT=1 collects what fails instead of stopping at it (to see what an older
// extension does: the "before" of docs/vscode.md's gallery).

export const WIDTHS = [480, 320, 240];
const ENUMS = /\b(allowOnce|allowSession|alwaysAllow|deny|completed|in_progress|toolCallBegin|editApplied|isError)\b/;
/** A tool's id where a sentence should begin (`edit app.py`, `bash ls`, `task ...`). */
const RAW_TOOL = /^(edit|multiEdit|write|read|bash|grep|glob|ls|task|ask_user|todoWrite|plan)\b/;

export const SOFT = !!process.env.CODER_E2E_SOFT;
export const failures = [];

/** A check: throws, or (soft) records and goes on. */
export function expect(ok, what, t) {
  if (ok) return true;
  if (!SOFT) throw new Error(what);
  failures.push(what);
  t?.step?.(`CHECK FAILED: ${what}`);
  return false;
}

/** Counts the notification toasts on screen, and the most seen while the chat was visible.
 * Polls until `stop()`; `max` is the worst moment, `at` what the scenario was doing then. */
export function watchToasts(page) {
  const state = { max: 0, at: '', doing: '', running: true };
  const tick = async () => {
    while (state.running) {
      try {
        const n = await toastsOnScreen(page);
        const chatOpen = await page.locator('iframe.webview').first().isVisible().catch(() => false);
        if (chatOpen && n > state.max) {
          state.max = n;
          state.at = state.doing;
        }
      } catch {
        /* the page is busy or gone */
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const done = tick();
  return {
    state,
    doing: (what) => (state.doing = what),
    stop: async () => {
      state.running = false;
      await done;
      return state;
    },
  };
}

export async function toastsOnScreen(page) {
  return page.evaluate(
    () => [...document.querySelectorAll('.notifications-toasts .notification-toast')].filter((el) => el.getClientRects().length > 0).length,
  );
}

/** Sets the sidebar (where the chat is) to `width` px by dragging its sash. */
export async function setSidebarWidth(page, width) {
  const sidebar = page.locator('#workbench\\.parts\\.sidebar');
  for (let attempt = 0; attempt < 4; attempt++) {
    const box = await sidebar.boundingBox();
    if (!box) throw new Error('no sidebar');
    if (Math.abs(box.width - width) <= 1) return box.width;
    const sash = await page.evaluate((right) => {
      const all = [...document.querySelectorAll('.monaco-sash.vertical')].map((s) => s.getBoundingClientRect());
      const near = all.filter((r) => r.height > 200 && Math.abs(r.left + r.width / 2 - right) < 6);
      const r = near[0];
      return r ? { x: r.left + r.width / 2, y: r.top + r.height / 2 } : null;
    }, box.x + box.width);
    if (!sash) throw new Error('no sash at the sidebar edge');
    await page.mouse.move(sash.x, sash.y);
    await page.mouse.down();
    await page.mouse.move(sash.x + (box.x + width - (box.x + box.width)) / 2, sash.y, { steps: 4 });
    await page.mouse.move(box.x + width, sash.y, { steps: 4 });
    await page.mouse.up();
    await page.waitForTimeout(300);
  }
  const box = await sidebar.boundingBox();
  return box?.width ?? 0;
}

/** What the chat's own document says about its layout: what sticks out, what is hidden. */
async function layoutReport(chat) {
  return chat.locator('body').evaluate(() => {
    const W = document.documentElement.clientWidth;
    const H = document.documentElement.clientHeight;
    const out = [];
    const name = (el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}"${(el.textContent ?? '').trim().slice(0, 20)}"`;
    for (const b of document.querySelectorAll('button')) {
      if (b.closest('[hidden]') || !b.getClientRects().length) continue; // not shown (a closed fold)
      const r = b.getBoundingClientRect();
      if (r.left < -0.5 || r.right > W + 0.5) out.push(`${name(b)} spans x ${r.left.toFixed(0)}..${r.right.toFixed(0)} of 0..${W}`);
      if (b.closest('#composer') && (r.top < -0.5 || r.bottom > H + 0.5)) out.push(`${name(b)} spans y ${r.top.toFixed(0)}..${r.bottom.toFixed(0)} of 0..${H}`);
      // clipped by an ancestor that hides its overflow
      for (let p = b.parentElement; p && p !== document.body; p = p.parentElement) {
        const cs = getComputedStyle(p);
        if (cs.overflowX === 'visible' && cs.overflowY === 'visible') continue;
        const pr = p.getBoundingClientRect();
        if (r.left < pr.left - 0.5 || r.right > pr.right + 0.5) out.push(`${name(b)} clipped by ${name(p)}`);
        break;
      }
    }
    const wide = [document.documentElement, document.body, document.getElementById('transcript'), document.getElementById('composer'), document.getElementById('bar')]
      .filter((el) => el && el.scrollWidth > el.clientWidth + 1)
      .map((el) => `${name(el)} is ${el.scrollWidth} px wide in ${el.clientWidth}`);
    out.push(...wide);
    const input = document.getElementById('input')?.getBoundingClientRect();
    if (!input || input.width < 100 || input.bottom > H + 0.5 || input.right > W + 0.5) out.push(`the input box is not fully on screen (${JSON.stringify(input)})`);
    return { width: W, height: H, problems: out };
  });
}

/** Point 1 and 2 on what the transcript shows now. `ws`: the workspace's absolute path. */
export async function transcriptChecks(chat, ws, t, where) {
  const report = await chat.locator('#transcript').evaluate((root, ws) => {
    const ours = [...root.querySelectorAll(':scope > .entry')].filter(
      (e) => !e.matches('.user, .assistant, .reply, .reasoning'),
    );
    const visible = ours.map((e) => e.innerText).join('\n');
    const all = root.textContent ?? '';
    const tools = [...root.querySelectorAll(':scope > .entry.tool')].map((e) => ({
      sentence: (e.querySelector(':scope > summary')?.innerText ?? '').trim(),
      tool: e.getAttribute('data-tool'),
      diffs: e.querySelectorAll('.diff').length,
      edit: e.classList.contains('edit'),
    }));
    const edits = [...root.querySelectorAll(':scope > .entry.edit')].map((e) => ({
      sentence: (e.querySelector('summary')?.innerText ?? e.innerText).trim(),
      diffs: e.querySelectorAll('.diff').length,
    }));
    const links = [...root.querySelectorAll('a[data-open]')].map((a) => a.textContent);
    return { visible, absolute: all.includes(ws), absoluteAt: all.slice(Math.max(0, all.indexOf(ws) - 60), all.indexOf(ws) + ws.length + 20), tools, edits, links };
  }, ws);
  const enumHit = report.visible.match(ENUMS);
  expect(!report.absolute, `${where}: the workspace's absolute path ${ws} is in the transcript (…${report.absoluteAt}…)`, t);
  expect(!enumHit, `${where}: a protocol name "${enumHit?.[0]}" is in the transcript's own words:\n${report.visible}`, t);
  const raw = report.tools.filter((x) => RAW_TOOL.test(x.sentence) || /\{"/.test(x.sentence) || !/^[A-Z]/.test(x.sentence));
  expect(!raw.length, `${where}: tool calls that are not sentences: ${JSON.stringify(raw.map((x) => x.sentence))}`, t);
  const editCalls = [...report.tools.filter((x) => x.edit), ...report.edits];
  const notOne = editCalls.filter((x) => x.diffs !== 1);
  expect(editCalls.length > 0 && !notOne.length, `${where}: edits without exactly one inline diff: ${JSON.stringify(notOne)} (of ${editCalls.length})`, t);
  const noDiffElsewhere = report.tools.filter((x) => !x.edit && x.diffs);
  expect(!noDiffElsewhere.length, `${where}: diffs outside an edit: ${JSON.stringify(noDiffElsewhere)}`, t);
  return report;
}

/** Point 3 at each width: boxes, overflow, then a screenshot; `label` names the state. */
export async function layoutAtWidths(t, label, widths = WIDTHS) {
  const { page, chat, screenshot, step } = t;
  for (const w of widths) {
    const got = await setSidebarWidth(page, w);
    expect(Math.abs(got - w) <= 2, `the sidebar could not be set to ${w} px (it is ${got})`, t);
    await page.waitForTimeout(400); // the webview lays out again
    const r = await layoutReport(chat);
    step(`${label} at ${w} px: the chat is ${r.width}x${r.height}${r.problems.length ? `; ${r.problems.length} problems` : ', nothing clipped'}`);
    expect(!r.problems.length, `${label} at sidebar ${w} px: ${r.problems.join('; ')}`, t);
    await screenshot(`${label}-${w}px`);
  }
}

/** Opens `name` with Quick Open. Late in a long run Quick Open may answer from the file
 * list it had before the step wrote the file ("No matching results"): it is closed and
 * asked again until it lists the file. */
export async function quickOpen(page, until, name, timeout = 45000) {
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: name }).first();
  await until(`${name} in Quick Open`, async () => {
    await page.keyboard.press('Control+P');
    await page.keyboard.type(name);
    if (await row.waitFor({ state: 'visible', timeout: 3000 }).then(() => true, () => false)) return true;
    await page.keyboard.press('Escape');
    return false;
  }, timeout);
  await page.keyboard.press('Enter');
}
