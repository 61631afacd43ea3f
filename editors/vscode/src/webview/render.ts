/** Transcript entry → HTML string. Pure (no DOM), so it is unit-testable. */
import { diffStat, type EditDiff } from '../editDiff';
import { highlightLine, languageOf } from '../highlight';
import { escapeHtml, renderMarkdown } from '../markdown';
import { relPath, relText } from '../paths';
import type { TodoItem } from '../protocol';
import { decisionWords, formatSeconds, type Sentence, sentenceText, statusWords, toolSentence } from '../sentences';
import { formatCount } from '../tasks';
import type { EditRecord, Entry } from '../transcript';

export function toolSummary(input: Record<string, unknown>): string {
  // the task tool: how many subagents, and how they run (its subagents are listed under it)
  if (Array.isArray(input.tasks)) return `${input.tasks.length} subagent${input.tasks.length === 1 ? '' : 's'} in parallel`;
  if (Array.isArray(input.chain)) return `a chain of ${input.chain.length} subagent${input.chain.length === 1 ? '' : 's'}`;
  for (const key of ['command', 'path', 'filePath', 'file_path', 'pattern', 'query', 'prompt']) {
    const v = input[key];
    if (typeof v === 'string' && v) return v.length > 120 ? `${v.slice(0, 119)}…` : v;
  }
  const json = JSON.stringify(input);
  return json === '{}' ? '' : json.length > 120 ? `${json.slice(0, 119)}…` : json;
}

/** A short label for an edited file URI: relative to the workspace folder that holds it
 * (else its path, decoded, without `file://`). */
export function uriLabel(uri: string, roots: readonly string[] = []): string {
  return relPath(uri, roots);
}

/** A file the user can click (opens it), named relative to the workspace. */
function pathLink(target: string, label: string): string {
  return `<a href="#" class="path" data-open="${escapeHtml(target)}" title="${escapeHtml(label)}">${escapeHtml(label)}</a>`;
}

/** A sentence (src/sentences.ts) as HTML: the file a link, a command a code span (elided
 * with its whole text in the tooltip when long), the outcome after a dot. */
export function renderSentence(s: Sentence): string {
  let target = '';
  if (s.target?.kind === 'path') target = ` ${pathLink(s.target.open, s.target.label)}`;
  else if (s.target?.kind === 'code') target = ` <code class="cmd" title="${escapeHtml(s.target.text)}">${escapeHtml(s.target.text)}</code>`;
  else if (s.target) target = ` <span class="target" title="${escapeHtml(s.target.text)}">${escapeHtml(s.target.text)}</span>`;
  const dots = s.state === 'running' || s.state === 'waiting' ? '…' : '';
  const why = s.error ? `: <span class="why">${escapeHtml(s.error)}</span>` : '';
  const facts = s.facts.length ? `<span class="facts"> · ${s.facts.map(escapeHtml).join(' · ')}</span>` : '';
  return `<span class="mark" aria-hidden="true"></span><span class="sentence">${escapeHtml(s.lead)}${target}${escapeHtml(s.after ?? '')}${dots}${why}</span>${facts}`;
}

/** A call's input, readable: each field on its line, text as text (not JSON strings). */
export function renderInput(input: Record<string, unknown>, roots: readonly string[] = []): string {
  const rows = Object.entries(input).map(([k, v]) => {
    const text = typeof v === 'string' ? v : JSON.stringify(v, null, 2);
    const body = relText(text ?? '', roots);
    return body.includes('\n') || body.length > 60
      ? `<div class="field"><span class="key">${escapeHtml(k)}</span><pre>${escapeHtml(body)}</pre></div>`
      : `<div class="field"><span class="key">${escapeHtml(k)}</span> <code>${escapeHtml(body)}</code></div>`;
  });
  return `<div class="input">${rows.join('') || '<i>no input</i>'}</div>`;
}

/** One hunk's lines, `-`/`+`/context, coloured for the file's language. */
function renderHunkLines(lines: EditDiff['hunks'][number]['lines'], lang: string | null): string {
  const cls = { ' ': 'ctx', '-': 'del', '+': 'add' } as const;
  return lines
    .map((l) => `<span class="dl ${cls[l.op]}"><span class="sign">${l.op === ' ' ? ' ' : l.op === '-' ? '−' : '+'}</span>${highlightLine(l.text, lang)}</span>`)
    .join('');
}

/** An edit's diff, inline: its file, what it changed, then each hunk, with what the
 * review made of it when the user reviewed it hunk by hunk. */
export function renderDiff(edit: EditRecord, roots: readonly string[] = []): string {
  const label = relPath(edit.uri, roots);
  const diff = edit.diff;
  if (!diff) return ''; // the edit did not come through the extension (nothing to show)
  const head = `<div class="diff-head">${pathLink(edit.uri, label)}${edit.applied ? ` <span class="stat">${diffStat(diff)}</span>` : ''}</div>`;
  const lang = languageOf(label);
  const hunks = diff.hunks
    .map((h) => {
      const ok = h.accepted && edit.applied;
      const verdict = diff.reviewed ? (h.accepted ? ' · accepted' : ' · rejected in your review') : edit.applied ? '' : ' · not applied';
      return (
        `<div class="hunk ${ok ? 'accepted' : 'rejected'}"><div class="hunk-head">line ${h.newStart}${verdict}</div>` +
        `<pre class="hunk-lines"><code>${renderHunkLines(h.lines, lang)}</code></pre></div>`
      );
    })
    .join('');
  return `<div class="diff" data-file="${escapeHtml(label)}">${head}${hunks}</div>`;
}

/** A folded block: a label, and what it hides. */
function fold(label: string, body: string, cls = 'io'): string {
  return `<details class="${cls}"><summary>${escapeHtml(label)}</summary>${body}</details>`;
}

type ToolEntry = Extract<Entry, { kind: 'tool' }>;

/** A tool call: one sentence with its outcome; the details folded under it (the diff of an
 * edit, the output, the input). */
export function renderTool(e: ToolEntry, roots: readonly string[] = []): string {
  const s = toolSentence(e, roots);
  const edits = e.edits ?? [];
  const output = relText(e.output, roots);
  const parts: string[] = [];
  for (const edit of edits) parts.push(renderDiff(edit, roots));
  if (s.state === 'failed') {
    // its whole error, unless its sentence already says all of it
    if (output && output.trim().replace(/^Error:\s*/, '') !== s.error) parts.push(`<pre class="output error-text">${escapeHtml(output)}</pre>`);
  } else if (output && edits.length) parts.push(fold('Output', `<pre class="output">${escapeHtml(output)}</pre>`));
  else if (output) parts.push(`<pre class="output">${escapeHtml(output)}</pre>`);
  parts.push(fold('Input', renderInput(e.input, roots)));
  const classes = ['entry', 'tool', s.state, edits.length ? 'edit' : '', s.state === 'failed' ? 'error' : ''].filter(Boolean).join(' ');
  return (
    `<details class="${classes}" data-tool="${escapeHtml(e.tool)}" title="${escapeHtml(sentenceText(s))}">` +
    `<summary>${renderSentence(s)}</summary><div class="details">${parts.join('')}</div></details>`
  );
}

/** Backquoted spans of a server's one-line text as code (everything escaped). */
function inlineCode(text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}

export function renderEntry(e: Entry, roots: readonly string[] = []): string {
  switch (e.kind) {
    case 'user':
      return (
        `<div class="entry user${e.pending ? ' pending' : ''}"><pre>${escapeHtml(e.text)}</pre>` +
        (!e.pending && e.submissionId
          ? `<button class="resend" data-resend="${escapeHtml(e.submissionId)}" title="Edit this message and resend it: a new session forked before it">Edit and resend</button>`
          : '') +
        '</div>'
      );
    case 'assistant':
      return `<div class="entry assistant md">${renderMarkdown(e.text)}${e.done ? '' : '<span class="cursor"></span>'}</div>`;
    case 'reasoning':
      return `<details class="entry reasoning"><summary>Thinking${e.done ? '' : '…'}</summary><div class="md">${renderMarkdown(e.text)}</div></details>`;
    case 'tool':
      return renderTool(e, roots);
    case 'shell': {
      const flags = [e.truncated ? 'output truncated' : '', e.timedOut ? 'timed out' : ''].filter(Boolean).join(', ');
      const status = e.cancelled ? 'cancelled' : e.exitCode === null ? (e.timedOut ? 'no exit code' : 'ended') : `exit ${e.exitCode}`;
      const bad = e.cancelled || e.timedOut || (e.exitCode !== null && e.exitCode !== 0);
      const took = e.done && e.startedAt !== undefined && e.endedAt !== undefined ? ` · ${formatSeconds(e.endedAt - e.startedAt)}` : '';
      const exit = e.done
        ? `<div class="exit${bad ? ' bad' : ''}">${status}${flags ? ` · ${flags}` : ''}${took}</div>`
        : '<div class="exit spin">running</div>';
      return (
        `<div class="entry shell"><div class="cmd" title="${escapeHtml(e.command)}">$ ${escapeHtml(e.command)}</div>` +
        `<pre>${escapeHtml(relText(e.output, roots))}</pre>${exit}</div>`
      );
    }
    case 'edit': {
      // an edit no tool call of the transcript made (a code action's, /undo's): its own sentence
      const label = relPath(e.uri, roots);
      const stat = e.diff && e.applied ? ` (${diffStat(e.diff)})` : '';
      const sentence = e.applied
        ? `<span class="mark" aria-hidden="true"></span><span class="sentence">Edited ${pathLink(e.uri, label)}${stat}</span>`
        : `<span class="mark" aria-hidden="true"></span><span class="sentence">Did not edit ${pathLink(e.uri, label)}` +
          `${e.reason ? `: <span class="why">${escapeHtml(relText(e.reason, roots))}</span>` : ''}</span>`;
      const cls = `entry edit ${e.applied ? 'done' : 'failed bad'}`;
      if (!e.diff) return `<div class="${cls}">${sentence}</div>`;
      return `<details class="${cls}"><summary>${sentence}</summary><div class="details">${renderDiff(e, roots)}</div></details>`;
    }
    case 'approval': {
      const answer = e.decision ? decisionWords(e.decision) : 'waiting for your answer…';
      return (
        `<div class="entry approval${e.decision ? '' : ' waiting'}"><span class="sentence">Coder asked to ${inlineCode(relText(e.summary, roots))}</span>` +
        `<span class="facts"> · ${escapeHtml(answer)}</span></div>`
      );
    }
    case 'subagent':
      return renderSubagent(e);
    case 'reply':
      // A slash command's output is laid out in columns for a terminal (/help's
      // table): Markdown would collapse the spaces, a monospace block keeps them.
      return `<div class="entry reply"><pre class="output">${escapeHtml(relText(e.text, roots))}</pre></div>`;
    case 'notice':
      return `<div class="entry notice ${e.level}">${escapeHtml(relText(e.text, roots))}</div>`;
    case 'plan':
      return renderPlan(e);
  }
}

const PLAN_ANSWERS: Record<string, string> = { approve: 'approved', revise: 'sent back for revision', reject: 'rejected' };
const PLAN_MODES = ['balanced', 'auto-edit', 'strict', 'yolo'];

/** Plan mode's plan (contract section 22), with Approve (in the chosen preset) / Revise / Reject. */
function renderPlan(e: Extract<Entry, { kind: 'plan' }>): string {
  const sub = escapeHtml(e.submissionId ?? '');
  const head = '<div class="plan-head">Proposed plan</div>';
  const body = `<div class="md">${renderMarkdown(e.plan)}</div>`;
  if (e.answer) return `<div class="entry plan answered">${head}${body}<div class="facts">Plan ${PLAN_ANSWERS[e.answer] ?? e.answer}</div></div>`;
  const options = PLAN_MODES.map((m) => `<option value="${m}">${m}</option>`).join('');
  const button = (action: string, label: string, title: string): string =>
    `<button data-plan-action="${action}" data-plan-sub="${sub}" title="${title}">${label}</button>`;
  return (
    `<div class="entry plan waiting">${head}${body}<div class="plan-actions">` +
    button('approve', 'Approve', 'Run the plan in the chosen preset') +
    `<select data-plan-mode aria-label="Preset to run the plan in">${options}</select>` +
    button('revise', 'Revise', 'Send the text of the input box as feedback; stay in plan mode') +
    button('reject', 'Reject', 'End plan mode; nothing runs') +
    '</div></div>'
  );
}

type SubagentEntry = Extract<Entry, { kind: 'subagent' }>;

/** A subagent, nested under the `task` call that started it: its agent, task, state,
 * tokens and a Stop of its own while it runs; opened, its steps and its answer. */
export function renderSubagent(e: SubagentEntry): string {
  const running = e.status === 'running';
  const state =
    e.status === 'running'
      ? '<span class="spin">running</span>'
      : e.status === 'stopping'
        ? '<span class="spin">stopping</span>'
        : `<span class="${e.status === 'completed' ? 'ok' : 'bad'}">${statusWords(e.status)}</span>`;
  const last = [...e.steps].reverse().find((s) => !s.done) ?? e.steps[e.steps.length - 1];
  const stepText = (s: SubagentEntry['steps'][number]): string =>
    sentenceText(toolSentence({ ...s, output: '', done: s.done, isError: s.isError }));
  const activity = running && last ? ` · <span class="activity">${escapeHtml(stepText({ ...last, done: false }))}</span>` : '';
  const tokens = e.tokens ? ` · ${formatCount(e.tokens)} tokens` : '';
  const prompt = e.prompt.split('\n')[0];
  const stop = running
    ? ` <button class="stop-agent" data-stop-agent="${escapeHtml(e.agentId)}" title="Stop this subagent (the others and the main agent go on)">Stop</button>`
    : '';
  const steps = e.steps
    .map((s) => `<li class="${s.done ? (s.isError ? 'bad' : 'done') : 'open'}">${escapeHtml(stepText(s))}</li>`)
    .join('');
  return (
    `<details class="entry subagent nested ${escapeHtml(e.status)}" data-agent-id="${escapeHtml(e.agentId)}">` +
    `<summary>↳ <b>${escapeHtml(e.agent)}</b> <span class="prompt">${escapeHtml(prompt.length > 100 ? `${prompt.slice(0, 99)}…` : prompt)}</span> ` +
    `${state}${activity}${tokens}${stop}</summary>` +
    (steps ? `<ol class="steps">${steps}</ol>` : '') +
    (e.text ? `<div class="md">${renderMarkdown(e.text)}</div>` : '') +
    `</details>`
  );
}

export function renderTodos(todos: readonly TodoItem[]): string {
  if (!todos.length) return '';
  const mark = { pending: '○', in_progress: '◐', completed: '●' } as const;
  const items = todos
    .map((t) => `<li class="${t.status}">${mark[t.status] ?? '○'} ${escapeHtml(t.content)}</li>`)
    .join('');
  return `<details open><summary>Todos (${todos.filter((t) => t.status === 'completed').length}/${todos.length})</summary><ul>${items}</ul></details>`;
}

/** The context window's share in use: a small meter's value and its tooltip. */
export function renderUsage(context: { usedTokens: number; limitTokens: number } | null): { percent: number; title: string } | null {
  if (!context || !context.limitTokens) return null;
  const percent = Math.min(100, Math.round((100 * context.usedTokens) / context.limitTokens));
  const n = (x: number): string => x.toLocaleString('en-US');
  return {
    percent,
    title: `Context: ${n(context.usedTokens)} of ${n(context.limitTokens)} tokens in use (${percent}%). /context lists the parts.`,
  };
}
