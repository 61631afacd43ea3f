/**
 * A tool call as one sentence in the user's words, with its outcome: "Edited app.py
 * (+1 −1)", "Ran `pytest -q` · exit 0 · 1.2 s", "Searched for `def add` · 3 matches in 2
 * files", "Could not edit app.py: oldString was not found in app.py." The protocol's names
 * (`allowOnce`, `completed`, the tools' ids) stay out of it. Pure (no `vscode`, no DOM):
 * the webview renders it, the tests read its text.
 */
import { diffStat, type EditDiff } from './editDiff';
import { relPath, relText } from './paths';

export type Target =
  | { kind: 'path'; label: string; open: string }
  | { kind: 'code'; text: string }
  | { kind: 'text'; text: string };

export interface Sentence {
  state: 'running' | 'waiting' | 'done' | 'failed';
  lead: string;
  target?: Target;
  /** Right after the target: ` (+1 −1)`. */
  after?: string;
  /** Why it failed: the first line of the error, or what the user decided. */
  error?: string;
  /** The outcome: `exit 0`, `1.2 s`, `3 matches`, `allowed once`. */
  facts: string[];
}

/** What a tool entry carries (the transcript's `tool` entry, structurally). */
export interface ToolCallView {
  tool: string;
  input: Record<string, unknown>;
  output: string;
  isError: boolean;
  done: boolean;
  cancelled?: boolean;
  startedAt?: number;
  endedAt?: number;
  exitCode?: number | null;
  timedOut?: boolean;
  approval?: { summary: string; decision: string | null };
  edits?: Array<{ uri: string; applied: boolean; reason: string | null; diff?: EditDiff }>;
}

/** Progressive, past, and "could not …" forms. */
const VERBS: Record<string, [string, string, string]> = {
  read: ['Reading', 'Read', 'read'],
  write: ['Writing', 'Wrote', 'write'],
  edit: ['Editing', 'Edited', 'edit'],
  multiEdit: ['Editing', 'Edited', 'edit'],
  bash: ['Running', 'Ran', 'run'],
  grep: ['Searching for', 'Searched for', 'search for'],
  glob: ['Looking for files matching', 'Looked for files matching', 'look for files matching'],
  ls: ['Listing', 'Listed', 'list'],
  task: ['Running', 'Ran', 'run'],
  ask_user: ['Asking you', 'Asked you', 'ask you'],
  todoWrite: ['Updating the to-do list', 'Updated the to-do list', 'update the to-do list'],
  todoRead: ['Reading the to-do list', 'Read the to-do list', 'read the to-do list'],
  plan: ['Planning', 'Planned', 'plan'],
  skill: ['Loading the skill', 'Loaded the skill', 'load the skill'],
  report_findings: ['Reporting', 'Reported', 'report'],
  // the editor's language servers (contract section 23)
  diagnostics: ["Reading the editor's problems", "Read the editor's problems", "read the editor's problems"],
  definition: ['Looking up the definition of', 'Looked up the definition of', 'look up the definition of'],
  references: ['Looking up the uses of', 'Looked up the uses of', 'look up the uses of'],
  symbols: ['Looking up symbols matching', 'Looked up symbols matching', 'look up symbols matching'],
};

/** An approval's decision in words (`approvalResolved.decision`). */
export function decisionWords(decision: string): string {
  switch (decision) {
    case 'allowOnce':
      return 'allowed once';
    case 'allowSession':
      return 'allowed for this session';
    case 'alwaysAllow':
      return 'always allowed';
    case 'deny':
      return 'denied';
    case 'cancelled':
      return 'question withdrawn';
    case 'completed':
      return 'done';
    case 'failed':
      return 'failed';
    default:
      return decision.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  }
}

/** A subagent's or a turn's status in words. */
export function statusWords(status: string): string {
  return { completed: 'done', cancelled: 'stopped', failed: 'failed', running: 'running', stopping: 'stopping' }[status] ?? status;
}

/** 0.04 → `0.0 s`, 1.234 → `1.2 s`, 12.5 → `13 s`, 125 → `2 min 5 s`. */
export function formatSeconds(ms: number): string {
  const s = ms / 1000;
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 60) return `${Math.round(s)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${Math.round(s - 60 * m)} s`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function firstLine(text: string, max = 160): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function pathTarget(p: string, roots: readonly string[]): Target {
  const label = relPath(p, roots) || p;
  return { kind: 'path', label, open: p };
}

/** grep's output (`rg --heading`: a path, then its `line:text` rows): matches and files. */
export function grepCounts(output: string): { matches: number; files: number; more: boolean } {
  let matches = 0;
  let files = 0;
  let more = false;
  for (const line of output.split('\n')) {
    if (!line) continue;
    if (/^\.\.\. /.test(line)) more = true;
    else if (/^\(.*unsaved editor buffer.*\)$/.test(line)) continue; // the server's note (contract section 23)
    else if (/^\d+[:-]/.test(line)) matches++;
    else files++;
  }
  return { matches, files, more };
}

/** Output lines that are not a trailing "... N more" note. */
function listed(output: string): { count: number; more: boolean } {
  const lines = output.split('\n').filter((l) => l.trim());
  const more = lines.some((l) => /^\.\.\. /.test(l));
  return { count: lines.filter((l) => !/^\.\.\. /.test(l) && !/^\(/.test(l)).length, more };
}

/** The exit code of a bash call: from its `shellFinished`, else its output's last line. */
function exitOf(call: ToolCallView): number | null | undefined {
  if (call.exitCode !== undefined) return call.exitCode;
  const m = /\[exit code: (-?\d+)\]\s*$/.exec(call.output);
  return m ? Number(m[1]) : undefined;
}

function subagentTarget(input: Record<string, unknown>): { lead?: string; target?: Target } {
  if (Array.isArray(input.tasks)) return { target: { kind: 'text', text: `${plural(input.tasks.length, 'subagent')} in parallel` } };
  if (Array.isArray(input.chain)) return { target: { kind: 'text', text: `a chain of ${plural(input.chain.length, 'subagent')}` } };
  const agent = str(input.agent);
  const prompt = firstLine(str(input.prompt), 100);
  return { target: { kind: 'text', text: `${agent ? `the ${agent} subagent` : 'a subagent'}${prompt ? `: ${prompt}` : ''}` } };
}

/** The target of a call: the file, the command, the pattern. */
function targetOf(call: ToolCallView, roots: readonly string[]): Target | undefined {
  const { tool, input } = call;
  const path = str(input.path) || str(input.filePath) || str(input.file_path);
  switch (tool) {
    case 'bash':
      return { kind: 'code', text: str(input.command).trim() };
    case 'grep':
    case 'glob':
      return { kind: 'code', text: str(input.pattern) };
    case 'ls':
      return pathTarget(path || '.', roots);
    case 'task':
      return subagentTarget(input).target;
    case 'ask_user': {
      const q = Array.isArray(input.questions) ? (input.questions[0] as { question?: unknown } | undefined) : undefined;
      const n = Array.isArray(input.questions) ? input.questions.length : 0;
      const text = firstLine(str(q?.question), 100);
      return text ? { kind: 'text', text: n > 1 ? `${text} (and ${plural(n - 1, 'more question')})` : text } : undefined;
    }
    case 'plan':
      return Array.isArray(input.steps) ? { kind: 'text', text: plural(input.steps.length, 'step') } : undefined;
    case 'skill':
      return str(input.name) ? { kind: 'code', text: str(input.name) } : undefined;
    case 'report_findings':
      return Array.isArray(input.findings) ? { kind: 'text', text: plural(input.findings.length, 'finding') } : undefined;
    case 'todoWrite':
    case 'todoRead':
      return undefined;
    case 'definition':
    case 'references':
      return str(input.symbol) ? { kind: 'code', text: str(input.symbol) } : undefined;
    case 'symbols':
      return str(input.query) ? { kind: 'code', text: str(input.query) } : undefined;
    case 'diagnostics':
      return path ? pathTarget(path, roots) : undefined;
  }
  if (path) return pathTarget(path, roots);
  if (VERBS[tool]) return undefined;
  return { kind: 'code', text: tool };
}

/** What a finished call found or changed, from its output and its edits. */
function outcomeOf(call: ToolCallView, s: Sentence, roots: readonly string[]): void {
  const { tool, input, output } = call;
  switch (tool) {
    case 'bash': {
      const code = exitOf(call);
      if (call.timedOut) s.facts.push('timed out');
      else if (code !== undefined && code !== null) s.facts.push(`exit ${code}`);
      break;
    }
    case 'grep': {
      if (/^No matches/.test(output)) s.facts.push('no matches');
      else {
        const c = grepCounts(output);
        s.facts.push(`${c.more ? 'more than ' : ''}${plural(c.matches, 'match', 'matches')}${c.files > 1 ? ` in ${plural(c.files, 'file')}` : ''}`);
      }
      const where = str(input.path);
      if (where) s.after = ` in ${relPath(where, roots)}`;
      break;
    }
    case 'glob': {
      if (/^No files match/.test(output)) s.facts.push('no files');
      else {
        const c = listed(output);
        s.facts.push(`${c.more ? 'more than ' : ''}${plural(c.count, 'file')}`);
      }
      break;
    }
    case 'ls': {
      if (/\(empty directory\)/.test(output)) s.facts.push('empty');
      else {
        const c = listed(output);
        s.facts.push(`${c.more ? 'more than ' : ''}${plural(c.count, 'entry', 'entries')}`);
      }
      break;
    }
    case 'read': {
      const offset = Number(input.offset) || 0;
      const limit = Number(input.limit) || 0;
      if (offset || limit) s.facts.push(limit ? `lines ${offset || 1}–${(offset || 1) + limit - 1}` : `from line ${offset}`);
      break;
    }
    case 'write':
      if (/^Created /.test(output)) s.lead = 'Created';
      else if (/^Updated /.test(output)) s.lead = 'Edited'; // a whole-file write: its diff says what changed
      if (/already has this content/.test(output)) s.facts.push('unchanged');
      break;
    case 'todoWrite': {
      const todos = Array.isArray(input.todos) ? (input.todos as Array<{ status?: unknown }>) : [];
      if (todos.length) s.facts.push(`${todos.filter((t) => t.status === 'completed').length} of ${todos.length} done`);
      break;
    }
  }
}

/** The diff stat, and what the review rejected, of the edits a call made. */
function editFacts(call: ToolCallView, s: Sentence): void {
  const edits = call.edits ?? [];
  const diffs = edits.map((e) => e.diff).filter((d): d is EditDiff => !!d);
  if (!diffs.length) return;
  const applied = edits.some((e) => e.applied);
  const added = diffs.reduce((n, d) => n + d.added, 0);
  const removed = diffs.reduce((n, d) => n + d.removed, 0);
  if (applied) s.after = `${s.after ?? ''} (${diffStat({ added, removed })})`;
  const total = diffs.reduce((n, d) => n + d.hunks.length, 0);
  const rejected = diffs.reduce((n, d) => n + d.hunks.filter((h) => !h.accepted).length, 0);
  const reviewed = diffs.some((d) => d.reviewed);
  if (reviewed && applied && rejected) s.facts.push(`${rejected} of ${plural(total, 'change')} rejected in your review`);
  else if (reviewed && applied) s.facts.push(total > 1 ? `all ${total} changes accepted` : 'accepted in your review');
  else if (reviewed && !applied) s.facts.push(total > 1 ? `all ${total} changes rejected in your review` : 'rejected in your review');
}

/** One tool call as a sentence. */
export function toolSentence(call: ToolCallView, roots: readonly string[] = []): Sentence {
  const [doing, did, todo] = VERBS[call.tool] ?? ['Using', 'Used', 'use'];
  const target = targetOf(call, roots);
  const decision = call.approval?.decision ?? null;
  const s: Sentence = { state: 'done', lead: did, target, facts: [] };
  const review = /^(edit|multiEdit|write)$/.test(call.tool);
  if (!call.done) {
    s.lead = doing;
    if (call.approval && decision === null) {
      s.state = 'waiting';
      s.facts.push(review ? 'waiting for your review' : 'waiting for your answer');
    } else s.state = 'running';
    if (decision && !review) s.facts.push(decisionWords(decision));
    return s;
  }
  const edits = call.edits ?? [];
  const rejectedEdit = edits.length > 0 && edits.every((e) => !e.applied);
  // a partly applied edit is an error for the model (it must not redo what was rejected),
  // and for the user an edit with some changes rejected
  const partly = edits.some((e) => e.applied);
  if (call.cancelled && !call.output) {
    s.state = 'failed';
    s.lead = `Stopped before it could ${todo}`;
    return s;
  }
  if ((call.isError && !partly) || rejectedEdit) {
    s.state = 'failed';
    if (decision === 'deny' || decision === 'cancelled' || rejectedEdit) {
      s.lead = `Did not ${todo}`;
      editFacts(call, s);
      if (!s.facts.length) s.facts.push(decisionWords(decision ?? 'deny'));
    } else {
      s.lead = `Could not ${todo}`;
      s.error = relText(firstLine(call.output.replace(/^Error:\s*/, '')), roots) || 'it failed';
    }
    return s;
  }
  if (call.output || call.tool === 'bash' || call.tool === 'read' || call.tool === 'todoWrite') outcomeOf(call, s, roots);
  editFacts(call, s);
  if (call.tool === 'write' && partly && s.lead === did) s.lead = 'Edited'; // its diff says what changed
  if (decision && !(review && call.edits?.some((e) => e.diff?.reviewed))) s.facts.push(decisionWords(decision));
  if (call.startedAt !== undefined && call.endedAt !== undefined && (call.tool === 'bash' || call.tool === 'task')) {
    s.facts.push(formatSeconds(call.endedAt - call.startedAt));
  }
  return s;
}

/** The sentence as plain text (tests, tooltips, the Neovim plugin's counterpart). */
export function sentenceText(s: Sentence): string {
  const target = !s.target ? '' : s.target.kind === 'path' ? s.target.label : s.target.kind === 'code' ? `\`${s.target.text}\`` : s.target.text;
  const dots = s.state === 'running' || s.state === 'waiting' ? '…' : '';
  return (
    `${s.lead}${target ? ` ${target}` : ''}${s.after ?? ''}${dots}${s.error ? `: ${s.error}` : ''}` +
    (s.facts.length ? ` · ${s.facts.join(' · ')}` : '')
  );
}
