/** Transcript entry → HTML string. Pure (no DOM), so it is unit-testable. */
import { escapeHtml, renderMarkdown } from '../markdown';
import type { TodoItem } from '../protocol';
import { formatCount } from '../tasks';
import type { Entry } from '../transcript';

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

/** A short label for an edited file URI: its path, decoded, without `file://`. */
export function uriLabel(uri: string): string {
  const m = /^file:\/\/[^/]*(\/.*)$/.exec(uri);
  const path = m ? m[1] : uri;
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

export function renderEntry(e: Entry): string {
  switch (e.kind) {
    case 'user':
      return `<div class="entry user${e.pending ? ' pending' : ''}"><pre>${escapeHtml(e.text)}</pre></div>`;
    case 'assistant':
      return `<div class="entry assistant md">${renderMarkdown(e.text)}${e.done ? '' : '<span class="cursor"></span>'}</div>`;
    case 'reasoning':
      return `<details class="entry reasoning"><summary>Thinking${e.done ? '' : '…'}</summary><div class="md">${renderMarkdown(e.text)}</div></details>`;
    case 'tool': {
      const state = !e.done ? '<span class="spin">running</span>' : e.isError ? '<span class="bad">error</span>' : '';
      const summary = toolSummary(e.input);
      return (
        `<details class="entry tool${e.isError ? ' error' : ''}"><summary><b>${escapeHtml(e.tool)}</b> ` +
        `<code>${escapeHtml(summary)}</code> ${state}</summary>` +
        `<pre class="input">${escapeHtml(JSON.stringify(e.input, null, 2))}</pre>` +
        (e.output ? `<pre class="output">${escapeHtml(e.output)}</pre>` : '') +
        `</details>`
      );
    }
    case 'shell': {
      const flags = [e.truncated ? 'output truncated' : '', e.timedOut ? 'timed out' : ''].filter(Boolean).join(', ');
      const status = e.cancelled ? 'cancelled' : e.exitCode === null ? (e.timedOut ? 'no exit code' : 'ended') : `exit ${e.exitCode}`;
      const bad = e.cancelled || e.timedOut || (e.exitCode !== null && e.exitCode !== 0);
      const exit = e.done
        ? `<div class="exit${bad ? ' bad' : ''}">${status}${flags ? ` · ${flags}` : ''}</div>`
        : '<div class="exit spin">running</div>';
      return (
        `<div class="entry shell"><div class="cmd">$ ${escapeHtml(e.command)}</div>` +
        `<pre>${escapeHtml(e.output)}</pre>${exit}</div>`
      );
    }
    case 'edit': {
      const link = `<a href="#" data-open="${escapeHtml(e.uri)}">${escapeHtml(uriLabel(e.uri))}</a>`;
      const status = e.applied ? 'edited' : `edit rejected${e.reason ? `: ${escapeHtml(e.reason)}` : ''}`;
      return `<div class="entry edit${e.applied ? '' : ' bad'}">${status} ${link}</div>`;
    }
    case 'approval':
      return (
        `<div class="entry approval">approval · <b>${escapeHtml(e.tool)}</b> ${escapeHtml(e.summary)}` +
        `${e.decision ? ` → <i>${escapeHtml(e.decision)}</i>` : ' (waiting…)'}</div>`
      );
    case 'subagent':
      return renderSubagent(e);
    case 'reply':
      // A slash command's output is laid out in columns for a terminal (/help's
      // table): Markdown would collapse the spaces, a monospace block keeps them.
      return `<div class="entry reply"><pre class="output">${escapeHtml(e.text)}</pre></div>`;
    case 'notice':
      return `<div class="entry notice ${e.level}">${escapeHtml(e.text)}</div>`;
  }
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
        : `<span class="${e.status === 'completed' ? 'ok' : 'bad'}">${e.status}</span>`;
  const last = [...e.steps].reverse().find((s) => !s.done) ?? e.steps[e.steps.length - 1];
  const activity = running && last ? ` · ${escapeHtml(last.tool)} <code>${escapeHtml(toolSummary(last.input))}</code>` : '';
  const tokens = e.tokens ? ` · ${formatCount(e.tokens)} tokens` : '';
  const prompt = e.prompt.split('\n')[0];
  const stop = running
    ? ` <button class="stop-agent" data-stop-agent="${escapeHtml(e.agentId)}" title="Stop this subagent (the others and the main agent go on)">Stop</button>`
    : '';
  const steps = e.steps
    .map((s) => `<li class="${s.done ? (s.isError ? 'bad' : 'done') : 'open'}"><b>${escapeHtml(s.tool)}</b> <code>${escapeHtml(toolSummary(s.input))}</code></li>`)
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

export function renderUsage(context: { usedTokens: number; limitTokens: number } | null): string {
  if (!context || !context.limitTokens) return '';
  const pct = Math.round((100 * context.usedTokens) / context.limitTokens);
  return `context ${pct}% (${Math.round(context.usedTokens / 1000)}k/${Math.round(context.limitTokens / 1000)}k)`;
}
