/** The chat webview (browser side): renders snapshots, sends what the user types. */
import { type ImageAttachment, IMAGE_TYPES, imageFromDataUrl, keptPastes, PASTE_THRESHOLD, pasteMarker } from '../attachments';
import type { CommandInfo } from '../protocol';
import { slashMatches } from '../slash';
import type { Snapshot } from '../transcript';
import type { FromWebview, ReviewView, ToWebview } from './messages';
import { renderEntry, renderTodos, renderUsage } from './render';

declare function acquireVsCodeApi(): { postMessage(msg: FromWebview): void };

const vscode = acquireVsCodeApi();
const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const transcriptEl = $<HTMLDivElement>('transcript');
const todosEl = $<HTMLDivElement>('todos');
const input = $<HTMLTextAreaElement>('input');
const completionsEl = $<HTMLUListElement>('completions');
const stopBtn = $<HTMLButtonElement>('stop');
const statusEl = $<HTMLSpanElement>('status');
const usageEl = $<HTMLSpanElement>('usage');
const meterEl = $<HTMLMeterElement>('meter');
const usagePctEl = $<HTMLSpanElement>('usage-pct');
const chipsEl = $<HTMLDivElement>('chips');
const reviewEl = $<HTMLDivElement>('review');

const rendered = new Map<number, { rev: number; el: Element }>();
/** The workspace folders the entries were rendered for (paths are shown relative to them). */
let renderedRoots = '';
let catalog: CommandInfo[] = [];
/** One line of the completion list: what it shows and what the input becomes. */
interface Match {
  label: string;
  hint: string;
  insertText: string;
}
let matches: Match[] = [];
// `@` completion answered by the server (coder.completeInput), newest request only
let atMatches: Match[] = [];
let atSeq = 0;
let selected = 0;
// what goes with the next input: the editor context (shown, removable), images, long pastes
let contextChip: string | null = null;
let images: ImageAttachment[] = [];
let pastes: string[] = [];

function chip(label: string, title: string, onRemove: () => void): HTMLElement {
  const el = document.createElement('span');
  el.className = 'chip';
  el.title = `${label} — ${title}`;
  const text = document.createElement('span');
  text.className = 'chip-label';
  text.textContent = label;
  el.append(text);
  const x = document.createElement('button');
  x.className = 'chip-remove';
  x.title = `Remove ${label}`;
  x.setAttribute('aria-label', `Remove ${label}`);
  x.textContent = '×';
  x.addEventListener('click', onRemove);
  el.append(x);
  return el;
}

function renderChips(): void {
  const els: HTMLElement[] = [];
  if (contextChip)
    els.push(chip(contextChip, 'Sent with your input: the active file and selection', () => vscode.postMessage({ type: 'dropContext' })));
  images.forEach((img, i) =>
    els.push(
      chip(`🖼 ${img.name}`, 'Sent with your input', () => {
        images.splice(i, 1);
        renderChips();
      }),
    ),
  );
  chipsEl.replaceChildren(...els);
}

function addImageFiles(files: File[]): boolean {
  const wanted = files.filter((f) => IMAGE_TYPES.includes(f.type));
  for (const file of wanted) {
    const reader = new FileReader();
    reader.onload = () => {
      const img = imageFromDataUrl(String(reader.result), file.name || `pasted image ${images.length + 1}`);
      if (img) {
        images.push(img);
        renderChips();
      }
    };
    reader.readAsDataURL(file);
  }
  return wanted.length > 0;
}

function fromHtml(html: string): Element {
  const t = document.createElement('template');
  t.innerHTML = html;
  return t.content.firstElementChild ?? document.createElement('div');
}

function applySnapshot(snapshot: Snapshot, busy: boolean, progress: string): void {
  const nearBottom = transcriptEl.scrollHeight - transcriptEl.scrollTop - transcriptEl.clientHeight < 40;
  const { roots } = snapshot.state;
  if (roots.join('\n') !== renderedRoots) {
    renderedRoots = roots.join('\n');
    for (const r of rendered.values()) r.rev = -1; // render every entry again
  }
  const ids = new Set(snapshot.entries.map((e) => e.id));
  for (const [id, r] of rendered) {
    if (!ids.has(id)) {
      r.el.remove();
      rendered.delete(id);
    }
  }
  let prev: Element | null = null;
  for (const entry of snapshot.entries) {
    const known = rendered.get(entry.id);
    let el = known?.el;
    if (!known || known.rev !== entry.rev) {
      const fresh = fromHtml(renderEntry(entry, roots));
      if (known?.el instanceof HTMLDetailsElement && fresh instanceof HTMLDetailsElement) {
        fresh.open = known.el.open;
        // and the folds inside it (a diff, the input) stay as the user left them
        const inner = known.el.querySelectorAll('details');
        fresh.querySelectorAll('details').forEach((d, i) => {
          if (inner[i]) d.open = (inner[i] as HTMLDetailsElement).open;
        });
      }
      if (known) known.el.replaceWith(fresh);
      el = fresh;
      rendered.set(entry.id, { rev: entry.rev, el: fresh });
    }
    if (el && (!el.isConnected || el.previousElementSibling !== prev)) {
      if (prev) prev.after(el);
      else transcriptEl.prepend(el);
    }
    prev = el ?? prev;
  }
  const todos = renderTodos(snapshot.state.todos);
  todosEl.hidden = !todos;
  todosEl.innerHTML = todos;
  const usage = renderUsage(snapshot.state.context);
  usageEl.hidden = !usage;
  if (usage) {
    meterEl.value = usage.percent;
    usagePctEl.textContent = `${usage.percent}%`;
    usageEl.title = usage.title;
  }
  stopBtn.disabled = !busy;
  // the chat shows what runs (the extension shows no notification while the chat is open)
  const doing = busy ? `${progress || 'Working'}…` : '';
  statusEl.textContent = doing;
  statusEl.title = doing;
  if (nearBottom) transcriptEl.scrollTop = transcriptEl.scrollHeight;
}

function atWord(): { start: number; end: number } | null {
  const end = input.selectionStart;
  const before = input.value.slice(0, end);
  const m = /(^|\s)(@\S*)$/.exec(before);
  return m ? { start: end - m[2].length, end } : null;
}

function requestAtCompletions(): void {
  atMatches = [];
  if (!atWord()) return;
  atSeq += 1;
  vscode.postMessage({ type: 'complete', text: input.value, position: input.selectionStart, seq: atSeq });
}

function updateCompletions(): void {
  const slash = slashMatches(input.value, catalog, 12).map((m) => ({
    label: `/${m.command.name}`,
    hint: ` ${m.command.argumentHint} — ${m.command.description}`,
    insertText: m.insertText,
  }));
  matches = slash.length ? slash : atMatches;
  selected = Math.min(selected, Math.max(0, matches.length - 1));
  completionsEl.hidden = matches.length === 0;
  completionsEl.replaceChildren(
    ...matches.map((m, i) => {
      const li = document.createElement('li');
      li.className = i === selected ? 'selected' : '';
      li.setAttribute('role', 'option');
      const name = document.createElement('b');
      name.textContent = m.label;
      const hint = document.createElement('span');
      hint.className = 'hint';
      hint.textContent = m.hint;
      li.append(name, hint);
      li.addEventListener('mousedown', (ev) => {
        ev.preventDefault();
        accept(i);
      });
      return li;
    }),
  );
}

function accept(i: number): void {
  const m = matches[i];
  if (!m) return;
  input.value = m.insertText;
  matches = [];
  completionsEl.hidden = true;
  input.focus();
}

function send(): void {
  const kept = keptPastes(input.value.trim(), pastes);
  if (!kept.text && !images.length) return;
  vscode.postMessage({ type: 'submit', text: kept.text, images: images.length ? images : undefined, pastes: kept.pastes.length ? kept.pastes : undefined });
  input.value = '';
  images = [];
  pastes = [];
  renderChips();
  updateCompletions();
}

input.addEventListener('paste', (ev) => {
  const data = ev.clipboardData;
  if (!data) return;
  const files = Array.from(data.items)
    .filter((i) => i.kind === 'file')
    .map((i) => i.getAsFile())
    .filter((f): f is File => f !== null);
  if (addImageFiles(files)) {
    ev.preventDefault();
    return;
  }
  const text = data.getData('text/plain');
  if (text.length > PASTE_THRESHOLD) {
    // a long paste stays whole but out of the way: a marker in the box
    ev.preventDefault();
    pastes.push(text);
    input.setRangeText(pasteMarker(pastes.length), input.selectionStart, input.selectionEnd, 'end');
  }
});
input.addEventListener('dragover', (ev) => ev.preventDefault());
input.addEventListener('drop', (ev) => {
  if (ev.dataTransfer && addImageFiles(Array.from(ev.dataTransfer.files))) ev.preventDefault();
});

input.addEventListener('input', () => {
  selected = 0;
  requestAtCompletions();
  updateCompletions();
});
input.addEventListener('keydown', (ev) => {
  const open = !completionsEl.hidden && matches.length > 0;
  if (open && (ev.key === 'ArrowDown' || ev.key === 'ArrowUp')) {
    ev.preventDefault();
    selected = (selected + (ev.key === 'ArrowDown' ? 1 : matches.length - 1)) % matches.length;
    updateCompletions();
  } else if (open && ev.key === 'Enter' && !ev.shiftKey && input.value.trim() === matches[selected]?.insertText.trim()) {
    ev.preventDefault();
    send();
  } else if (open && (ev.key === 'Tab' || (ev.key === 'Enter' && !ev.shiftKey))) {
    ev.preventDefault();
    accept(selected);
  } else if (open && ev.key === 'Escape') {
    completionsEl.hidden = true;
    matches = [];
  } else if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
    ev.preventDefault();
    send();
  }
});
$('send').addEventListener('click', send);
stopBtn.addEventListener('click', () => vscode.postMessage({ type: 'interrupt' }));
$('new').addEventListener('click', () => vscode.postMessage({ type: 'newSession' }));
/** The edit reviews waiting for the user: one line each, with Show / Apply / Reject. */
function renderReviews(reviews: ReviewView[]): void {
  // the line takes room from the transcript: keep its end in view if it was
  const nearBottom = transcriptEl.scrollHeight - transcriptEl.scrollTop - transcriptEl.clientHeight < 40;
  requestAnimationFrame(() => {
    if (nearBottom) transcriptEl.scrollTop = transcriptEl.scrollHeight;
  });
  reviewEl.hidden = reviews.length === 0;
  reviewEl.replaceChildren(
    ...reviews.map((r) => {
      const row = document.createElement('div');
      row.className = 'review-row';
      const text = document.createElement('span');
      text.className = 'review-text';
      const files = r.files.join(', ');
      text.textContent = `Review ${files}: ${r.accepted} of ${r.total} change${r.total === 1 ? '' : 's'} ticked`;
      text.title = `${r.label} — untick changes in the list to reject them`;
      const button = (label: string, action: 'show' | 'apply' | 'reject', title: string): HTMLButtonElement => {
        const b = document.createElement('button');
        b.textContent = label;
        b.title = title;
        b.dataset.review = action;
        b.addEventListener('click', () => vscode.postMessage({ type: 'review', id: r.id, action }));
        return b;
      };
      const buttons = document.createElement('span');
      buttons.className = 'buttons';
      buttons.append(
        button('Show', 'show', 'Show the diff and the list of changes again'),
        button('Apply', 'apply', 'Apply the ticked changes'),
        button('Reject', 'reject', 'Reject the whole edit'),
      );
      row.append(text, buttons);
      return row;
    }),
  );
}

transcriptEl.addEventListener('click', (ev) => {
  const codeAction = (ev.target as HTMLElement).closest('[data-code-action]') as HTMLButtonElement | null;
  if (codeAction) {
    ev.preventDefault();
    const code = codeAction.closest('.code-block')?.querySelector('code')?.textContent ?? '';
    const action = codeAction.getAttribute('data-code-action') === 'insert' ? 'insert' : 'copy';
    vscode.postMessage({ type: 'code', action, text: code });
    const label = codeAction.textContent;
    codeAction.textContent = action === 'copy' ? 'Copied' : 'Inserted';
    setTimeout(() => (codeAction.textContent = label), 1500);
    return;
  }
  const plan = (ev.target as HTMLElement).closest('[data-plan-action]') as HTMLButtonElement | null;
  if (plan) {
    ev.preventDefault();
    const action = plan.getAttribute('data-plan-action') as 'approve' | 'revise' | 'reject';
    const mode = (plan.parentElement?.querySelector('[data-plan-mode]') as HTMLSelectElement | null)?.value;
    const feedback = action === 'revise' ? input.value.trim() : undefined;
    if (action === 'revise' && !feedback) {
      input.placeholder = 'Type what to change in the plan, then click Revise';
      input.focus();
      return;
    }
    if (action === 'revise') input.value = '';
    vscode.postMessage({ type: 'plan', submissionId: plan.getAttribute('data-plan-sub') ?? '', action, feedback, mode: action === 'approve' ? mode : undefined });
    return;
  }
  const stop = (ev.target as HTMLElement).closest('[data-stop-agent]');
  if (stop) {
    ev.preventDefault(); // inside a <summary>: do not toggle it
    (stop as HTMLButtonElement).disabled = true;
    vscode.postMessage({ type: 'stopAgent', agentId: stop.getAttribute('data-stop-agent') ?? '' });
    return;
  }
  const resend = (ev.target as HTMLElement).closest('[data-resend]');
  if (resend) {
    ev.preventDefault();
    const text = resend.closest('.entry')?.querySelector('pre')?.textContent ?? '';
    vscode.postMessage({ type: 'resend', submissionId: resend.getAttribute('data-resend') ?? '', text });
    return;
  }
  const a = (ev.target as HTMLElement).closest('[data-open]');
  if (a) {
    ev.preventDefault();
    vscode.postMessage({ type: 'openFile', uri: a.getAttribute('data-open') ?? '' });
  }
});

window.addEventListener('message', (ev: MessageEvent<ToWebview>) => {
  const msg = ev.data;
  if (msg.type === 'snapshot') applySnapshot(msg.snapshot, msg.busy, msg.progress ?? '');
  else if (msg.type === 'reviews') renderReviews(msg.reviews);
  else if (msg.type === 'catalog') {
    catalog = msg.commands;
    updateCompletions();
  } else if (msg.type === 'focus') input.focus();
  else if (msg.type === 'completions') {
    const word = atWord();
    if (msg.seq !== atSeq || !word) return; // the user typed on: a newer request is coming
    const text = input.value;
    atMatches = msg.items.map((item) => ({
      label: item.label,
      hint: item.detail ? ` — ${item.detail}` : item.kind === 'agent' ? ' — subagent' : '',
      insertText: `${text.slice(0, word.start)}${item.label}${item.label.endsWith('/') ? '' : ' '}${text.slice(word.end)}`,
    }));
    updateCompletions();
  } else if (msg.type === 'context') {
    contextChip = msg.label;
    renderChips();
  }
});

vscode.postMessage({ type: 'ready' });
