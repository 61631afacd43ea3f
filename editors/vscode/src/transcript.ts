/**
 * The transcript MODEL: applies `coder/event` notifications and command results
 * to a list of entries. Pure TypeScript (no `vscode`), so it is unit-testable and
 * shared by the extension host; the webview only renders snapshots of it.
 */
import type { EditDiff } from './editDiff';
import { uriPath } from './paths';
import type { CoderEvent, CommandResult, KnownEvent, Status, TodoItem } from './protocol';

interface Base {
  id: number;
  /** Bumped on every change, so a renderer can redraw only what changed. */
  rev: number;
  submissionId?: string;
}

export type Entry = Base &
  (
    | { kind: 'user'; text: string; pending: boolean }
    | { kind: 'assistant'; text: string; done: boolean }
    | { kind: 'reasoning'; text: string; done: boolean }
    | {
        kind: 'tool';
        callId: string;
        tool: string;
        input: Record<string, unknown>;
        output: string;
        isError: boolean;
        done: boolean;
        /** When it began and ended (the client's clock): a bash call's duration. */
        startedAt?: number;
        endedAt?: number;
        /** A bash call's exit code and time-out (its `shellFinished`). */
        exitCode?: number | null;
        timedOut?: boolean;
        /** The turn ended before the call did. */
        cancelled?: boolean;
        /** The approval question asked about this call, and the user's answer. */
        approval?: { summary: string; decision: string | null };
        /** The edits the call made (`editApplied`), with their diffs when the extension saw them. */
        edits?: EditRecord[];
      }
    | {
        kind: 'shell';
        command: string;
        output: string;
        exitCode: number | null;
        done: boolean;
        truncated: boolean;
        timedOut: boolean;
        /** Interrupted: there is no exit code to show. */
        cancelled?: boolean;
        startedAt?: number;
        endedAt?: number;
      }
    | ({ kind: 'edit' } & EditRecord)
    | { kind: 'approval'; callId: string; tool: string; summary: string; decision: string | null }
    | {
        kind: 'subagent';
        agentId: string;
        agent: string;
        prompt: string;
        /** The `task` call that started it (the /task id for a task's steps). */
        parentCallId: string;
        /** `stopping`: the user clicked Stop and the server has not said it ended. */
        status: 'running' | 'stopping' | Status;
        steps: SubagentStep[];
        /** Its answer so far (the end of it, capped). */
        text: string;
        tokens: number;
      }
    | { kind: 'reply'; text: string; status: Status }
    | { kind: 'notice'; level: 'info' | 'error'; text: string }
    /** Plan mode's plan; `answer`: what the user chose (null: not answered yet). */
    | { kind: 'plan'; plan: string; answer: PlanAction | null }
  );

export type PlanAction = 'approve' | 'revise' | 'reject';

/** One file an agent edit changed (or tried to), with its diff when known. */
export interface EditRecord {
  uri: string;
  applied: boolean;
  reason: string | null;
  diff?: EditDiff;
}

/** The tools whose edits belong to their call (the `editApplied` during the call). */
const EDIT_TOOLS = new Set(['edit', 'multiEdit', 'write']);

export interface SubagentStep {
  callId: string;
  tool: string;
  input: Record<string, unknown>;
  done: boolean;
  isError: boolean;
}

/** What a subagent entry keeps: its last steps and the end of its answer. */
export const SUBAGENT_MAX_STEPS = 50;
export const SUBAGENT_MAX_TEXT = 4000;

export type EntryKind = Entry['kind'];
type EntryOf<K extends EntryKind> = Extract<Entry, { kind: K }>;
type NewEntry = Entry extends infer E ? (E extends Entry ? Omit<E, 'id' | 'rev'> : never) : never;

export interface TranscriptState {
  sessionId: string | null;
  model: string | null;
  provider: string | null;
  preset: string | null;
  todos: TodoItem[];
  context: { usedTokens: number; limitTokens: number } | null;
  /** The workspace folders' paths: the transcript names files relative to them. */
  roots: string[];
}

export interface Snapshot {
  entries: Entry[];
  state: TranscriptState;
}

export class Transcript {
  readonly entries: Entry[] = [];
  readonly state: TranscriptState = {
    sessionId: null,
    model: null,
    provider: null,
    preset: null,
    todos: [],
    context: null,
    roots: [],
  };
  /** Set by `commandsChanged`; the owner refetches the catalog and clears it. */
  commandsStale = false;
  /** Set when the session changed: the owner asks the server for its model again. */
  modelStale = false;
  private nextId = 1;
  private resending: string | null = null;
  private readonly finished = new Set<string>();
  private readonly listeners: Array<() => void> = [];
  /** Diffs of edits the extension applied, by file path, until their `editApplied`. */
  private readonly diffs = new Map<string, EditDiff[]>();

  /** @param now the clock of the calls' durations (tests pass their own) */
  constructor(private readonly now: () => number = Date.now) {}

  onDidChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  snapshot(): Snapshot {
    return {
      entries: this.entries.map((e) => ({ ...e })),
      state: { ...this.state, todos: [...this.state.todos], roots: [...this.state.roots] },
    };
  }

  setRoots(roots: readonly string[]): void {
    this.state.roots = [...roots];
    this.changed();
  }

  /** The diff of an edit the extension is applying to `uri`; the `editApplied` that
   * follows carries it into the transcript. */
  noteEditDiff(uri: string, diff: EditDiff): void {
    const key = uriPath(uri);
    this.diffs.set(key, [...(this.diffs.get(key) ?? []), diff]);
  }

  private takeDiff(uri: string): EditDiff | undefined {
    const key = uriPath(uri);
    const queue = this.diffs.get(key);
    const diff = queue?.shift();
    if (queue && !queue.length) this.diffs.delete(key);
    return diff;
  }

  clear(): void {
    this.entries.length = 0;
    this.finished.clear();
    this.changed();
  }

  /** Edit and resend (contract section 22): the user message `submissionId` is being
   * replaced; when the server forks (`sessionChanged` reason `fork`), it and everything
   * after it leave the transcript (the original session keeps them). */
  beginResend(submissionId: string): void {
    this.resending = submissionId;
  }

  /** The resend was answered: refused (nothing forked), nothing is cut. */
  endResend(): void {
    this.resending = null;
  }

  private cutForFork(): void {
    const from = this.entries.findIndex((e) => e.kind === 'user' && e.submissionId === this.resending);
    this.resending = null;
    if (from < 0) return;
    const kept = this.entries.slice(from).filter((e) => e.kind === 'user' && e.pending); // the new text
    this.entries.splice(from, this.entries.length - from, ...kept);
  }

  /** A line typed by the user, shown before the server echoes it. */
  addUserInput(text: string): void {
    this.add({ kind: 'user', text, pending: true });
    this.changed();
  }

  /** The user answered the plan `submissionId` proposed: its buttons go. */
  answerPlan(submissionId: string, action: PlanAction): void {
    const plan = this.findLast('plan', (e) => e.submissionId === submissionId);
    if (plan) this.touch(plan, { answer: action });
    this.changed();
  }

  addNotice(text: string, level: 'info' | 'error' = 'info'): void {
    this.add({ kind: 'notice', level, text });
    this.changed();
  }

  /** Applies one `coder/event`. Returns false for unknown or malformed events. */
  applyEvent(raw: CoderEvent): boolean {
    if (typeof raw !== 'object' || raw === null || typeof raw.type !== 'string') return false;
    const ev = raw as KnownEvent;
    const sub = ev.submissionId || undefined;
    const agentId = (raw as { agentId?: unknown }).agentId;
    if (typeof agentId === 'string') {
      // A subagent's events (contract section 13) go to its own entry, nested under the
      // `task` call that started it; only its approvals are main-transcript questions.
      if (raw.type !== 'approvalRequested' && raw.type !== 'approvalResolved') {
        this.applySubagentEvent(agentId, raw, sub);
        this.changed();
        return true;
      }
    }
    switch (ev.type) {
      case 'userMessage': {
        const pending = this.entries.find(
          (e): e is EntryOf<'user'> => e.kind === 'user' && e.pending && e.text.trim() === ev.text.trim(),
        );
        if (pending) this.touch(pending, { pending: false, submissionId: sub });
        else this.add({ kind: 'user', text: ev.text, pending: false, submissionId: sub });
        break;
      }
      case 'assistantDelta':
      case 'reasoningDelta': {
        const kind = ev.type === 'assistantDelta' ? 'assistant' : 'reasoning';
        const last = this.entries[this.entries.length - 1];
        if (last && last.kind === kind && !last.done && last.submissionId === sub) {
          this.touch(last, { text: last.text + ev.text });
        } else {
          this.add({ kind, text: ev.text, done: false, submissionId: sub });
        }
        break;
      }
      case 'assistantRestart':
        // the provider retried mid-stream: the text streamed since the step began is void
        this.dropOpenStreams(sub);
        break;
      case 'assistantMessage': {
        const open = this.findLast('assistant', (e) => e.submissionId === sub && !e.done);
        if (open) this.touch(open, { text: ev.text, done: true });
        else if (!this.findLast('assistant', (e) => e.submissionId === sub && e.text === ev.text)) {
          this.add({ kind: 'assistant', text: ev.text, done: true, submissionId: sub });
        }
        this.closeStreams(sub, 'reasoning');
        break;
      }
      case 'toolCallBegin':
        this.closeStreams(sub);
        this.add({
          kind: 'tool',
          callId: ev.callId,
          tool: ev.tool,
          input: ev.input ?? {},
          output: '',
          isError: false,
          done: false,
          startedAt: this.now(),
          submissionId: sub,
        });
        break;
      case 'toolCallEnd': {
        const call = this.findLast('tool', (e) => e.callId === ev.callId);
        if (call) this.touch(call, { output: ev.output, isError: !!ev.isError, done: true, endedAt: this.now() });
        else
          this.add({
            kind: 'tool',
            callId: ev.callId,
            tool: '?',
            input: {},
            output: ev.output,
            isError: !!ev.isError,
            done: true,
            submissionId: sub,
          });
        break;
      }
      case 'shellOutput': {
        const tool = this.findLast('tool', (e) => e.submissionId === sub && !e.done);
        if (tool) {
          this.touch(tool, { output: tool.output + ev.chunk });
          break;
        }
        const shell = this.openShell(sub);
        this.touch(shell, { output: shell.output + ev.chunk });
        break;
      }
      case 'shellFinished': {
        const tool = this.findLast('tool', (e) => e.submissionId === sub && !e.done);
        if (tool) {
          // the bash call's own command ended: its exit code is the call's outcome
          this.touch(tool, { exitCode: ev.exitCode, timedOut: !!ev.timedOut });
          break;
        }
        const shell = this.openShell(sub, ev.command);
        this.touch(shell, {
          command: shell.command || ev.command,
          exitCode: ev.exitCode,
          truncated: !!ev.truncated,
          timedOut: !!ev.timedOut,
          done: true,
          endedAt: this.now(),
        });
        break;
      }
      case 'editApplied': {
        const record: EditRecord = { uri: ev.uri, applied: ev.applied, reason: ev.reason ?? null };
        const diff = this.takeDiff(ev.uri);
        if (diff) record.diff = diff;
        // the edit of a write/edit call belongs to that call: one sentence, one diff
        const call = this.findLast('tool', (e) => e.submissionId === sub && !e.done && EDIT_TOOLS.has(e.tool));
        if (call) this.touch(call, { edits: [...(call.edits ?? []), record] });
        else this.add({ kind: 'edit', ...record, submissionId: sub });
        break;
      }
      case 'approvalRequested': {
        // a question about a call in the transcript is part of that call's sentence
        const call = this.findLast('tool', (e) => e.callId === ev.callId && !e.done);
        if (call) this.touch(call, { approval: { summary: ev.summary, decision: null } });
        else this.add({ kind: 'approval', callId: ev.callId, tool: ev.tool, summary: ev.summary, decision: null, submissionId: sub });
        break;
      }
      case 'approvalResolved': {
        const call = this.findLast('tool', (e) => e.callId === ev.callId && !!e.approval);
        if (call?.approval) {
          this.touch(call, { approval: { ...call.approval, decision: ev.decision } });
          break;
        }
        const a = this.findLast('approval', (e) => e.callId === ev.callId);
        if (a) this.touch(a, { decision: ev.decision });
        break;
      }
      case 'todoUpdated':
        this.state.todos = Array.isArray(ev.todos) ? ev.todos.map((t) => ({ ...t })) : [];
        break;
      case 'contextUsage':
        if (ev.agentId) break; // a subagent's own window, not the session's
        this.state.context = { usedTokens: ev.usedTokens, limitTokens: ev.limitTokens };
        break;
      case 'sessionChanged': {
        const label =
          { new: 'New session', clear: 'Context cleared', resume: 'Resumed session', fork: 'Edited and resent, new session' }[ev.reason] ??
          'Session changed';
        if (ev.reason === 'fork') this.cutForFork();
        this.state.sessionId = ev.sessionId || this.state.sessionId;
        if (ev.reason !== 'clear') this.state.todos = [];
        if (ev.reason === 'resume') this.modelStale = true; // a resumed session keeps its own model
        this.state.context = null;
        this.add({ kind: 'notice', level: 'info', text: `${label} ${shortId(ev.sessionId)}`.trim(), submissionId: sub });
        break;
      }
      case 'modelChanged':
        this.state.model = ev.model;
        this.state.provider = ev.provider;
        this.add({ kind: 'notice', level: 'info', text: `Model: ${ev.model} (${ev.provider})`, submissionId: sub });
        break;
      case 'planProposed':
        this.add({ kind: 'plan', plan: typeof ev.plan === 'string' ? ev.plan : '', answer: null, submissionId: sub });
        break;
      case 'permissionsChanged':
        this.state.preset = ev.preset;
        this.add({ kind: 'notice', level: 'info', text: `Permissions: ${ev.preset}`, submissionId: sub });
        break;
      case 'commandsChanged':
        this.commandsStale = true;
        break;
      case 'turnFinished':
        this.closeStreams(sub);
        for (const e of this.entries) {
          if (e.submissionId !== sub) continue;
          if (e.kind === 'tool' && !e.done) this.touch(e, { done: true, cancelled: ev.status !== 'completed', endedAt: this.now() });
          // the question is gone with the turn (no approvalResolved came)
          if (e.kind === 'approval' && e.decision === null) this.touch(e, { decision: 'cancelled' });
          if (e.kind === 'tool' && e.approval && e.approval.decision === null) {
            this.touch(e, { approval: { ...e.approval, decision: 'cancelled' } });
          }
          if (e.kind === 'shell' && !e.done) this.touch(e, { done: true, cancelled: ev.status === 'cancelled', endedAt: this.now() });
          if (e.kind === 'subagent' && (e.status === 'running' || e.status === 'stopping')) {
            this.touch(e, { status: ev.status }); // its own end never came: the turn's says it
          }
        }
        if (ev.status !== 'completed' && sub && !this.finished.has(sub)) {
          const text = ev.status === 'failed' ? 'The turn failed.' : 'Stopped.';
          this.add({ kind: 'notice', level: ev.status === 'failed' ? 'error' : 'info', text, submissionId: sub });
        }
        if (sub) this.finished.add(sub);
        break;
      case 'error':
        this.add({ kind: 'notice', level: 'error', text: ev.message, submissionId: sub });
        break;
      case 'notice':
        this.add({ kind: 'notice', level: 'info', text: ev.message, submissionId: sub });
        break;
      case 'hookRan': // one compact line per hook run; a failed one stands out
        this.add({
          kind: 'notice',
          level: ev.decision === 'failed' ? 'error' : 'info',
          text: `hook ${ev.event} ${ev.name}: ${HOOK_DECISIONS[ev.decision] ?? ev.decision} (${ev.ms} ms)`,
          submissionId: sub,
        });
        break;
      default:
        return false;
    }
    if (ev.sessionId && !this.state.sessionId) this.state.sessionId = ev.sessionId;
    this.changed();
    return true;
  }

  /**
   * Applies the answer of a command: fills in what the events did not already show.
   * Errors go in as error notices (the VS Code layer also pops them up).
   */
  applyResult(result: CommandResult): void {
    const sub = result.submissionId || undefined;
    if (result.sessionId) this.state.sessionId = result.sessionId;
    this.bindPendingUser(sub);
    const data = result.data as { kind?: string; current?: string; provider?: string; preset?: string } | null | undefined;
    if (data?.kind === 'model' && data.current) {
      this.state.model = data.current;
      this.state.provider = data.provider ?? this.state.provider;
    }
    if (data?.kind === 'permissions' && data.preset) this.state.preset = data.preset;
    switch (result.mode) {
      case 'error': {
        const text = result.error?.message || result.reply || 'Error';
        const shown = this.entries.some((e) => e.kind === 'notice' && e.level === 'error' && e.submissionId === sub && e.text === text);
        if (!shown) this.add({ kind: 'notice', level: 'error', text, submissionId: sub });
        break;
      }
      case 'nl': {
        this.closeStreams(sub);
        // a plan mode turn's reply is its plan, already shown with its buttons
        const has = this.entries.some((e) => (e.kind === 'assistant' || e.kind === 'plan') && e.submissionId === sub);
        if (!has && result.reply) this.add({ kind: 'assistant', text: result.reply, done: true, submissionId: sub });
        break;
      }
      case 'raw': {
        const shell = this.findLast('shell', (e) => e.submissionId === sub);
        const output = result.rawOutput ?? result.reply ?? '';
        const cancelled = result.status === 'cancelled';
        if (shell) {
          this.touch(shell, {
            command: shell.command || (result.command ?? ''),
            output: shell.output || output,
            exitCode: result.exitCode ?? shell.exitCode,
            done: true,
            cancelled,
            endedAt: shell.endedAt ?? this.now(),
          });
        } else {
          this.add({
            kind: 'shell',
            command: result.command ?? '',
            output,
            exitCode: result.exitCode ?? null,
            done: true,
            truncated: false,
            timedOut: false,
            cancelled,
            submissionId: sub,
          });
        }
        break;
      }
      case 'command':
        if (result.reply) this.add({ kind: 'reply', text: result.reply, status: result.status, submissionId: sub });
        if (data?.kind === 'session' || data?.kind === 'resumed') this.modelStale = true;
        break;
    }
    if (result.status === 'cancelled' && !(sub && this.finished.has(sub))) {
      this.add({ kind: 'notice', level: 'info', text: 'Stopped.', submissionId: sub });
    }
    if (sub) this.finished.add(sub);
    this.changed();
  }

  /** The user clicked a subagent's Stop: shown at once, until its `subagentFinished`. */
  markStopping(agentId: string): void {
    const e = this.findLast('subagent', (x) => x.agentId === agentId);
    if (e && e.status === 'running') {
      this.touch(e, { status: 'stopping' });
      this.changed();
    }
  }

  private applySubagentEvent(agentId: string, raw: CoderEvent, sub: string | undefined): void {
    const r = raw as Record<string, unknown>;
    const str = (v: unknown): string => (typeof v === 'string' ? v : '');
    let e = this.findLast('subagent', (x) => x.agentId === agentId);
    if (!e) {
      const parentCallId = str(r.parentCallId);
      e = this.insertAfterFamily(parentCallId, {
        kind: 'subagent',
        agentId,
        agent: str(r.agent) || agentId.replace(/-[0-9a-f]{8}$/, ''),
        prompt: str(r.prompt),
        parentCallId,
        status: 'running',
        steps: [],
        text: '',
        tokens: 0,
        submissionId: sub,
      });
    }
    switch (r.type) {
      case 'subagentStarted':
        this.touch(e, { agent: str(r.agent) || e.agent, prompt: str(r.prompt) || e.prompt });
        break;
      case 'toolCallBegin': {
        const input = typeof r.input === 'object' && r.input !== null ? (r.input as Record<string, unknown>) : {};
        const steps = [...e.steps, { callId: str(r.callId), tool: str(r.tool) || '?', input, done: false, isError: false }];
        this.touch(e, { steps: steps.slice(-SUBAGENT_MAX_STEPS) });
        break;
      }
      case 'toolCallEnd': {
        const found = e.steps.findIndex((s) => s.callId === r.callId && !s.done);
        const at = found >= 0 ? found : lastOpen(e.steps);
        const steps = e.steps.map((s, i) => (i === at ? { ...s, done: true, isError: !!r.isError } : s));
        this.touch(e, { steps });
        break;
      }
      case 'assistantDelta':
        this.touch(e, { text: (e.text + str(r.text)).slice(-SUBAGENT_MAX_TEXT) });
        break;
      case 'assistantRestart':
        this.touch(e, { text: '' });
        break;
      case 'assistantMessage':
        this.touch(e, { text: str(r.text).slice(-SUBAGENT_MAX_TEXT) });
        break;
      case 'subagentFinished': {
        const status = r.status === 'completed' || r.status === 'failed' ? r.status : 'cancelled';
        const usage = (r.usage ?? {}) as { inputTokens?: unknown; outputTokens?: unknown };
        const tokens = (Number(usage.inputTokens) || 0) + (Number(usage.outputTokens) || 0);
        const steps = e.steps.map((s) => (s.done ? s : { ...s, done: true }));
        this.touch(e, { status, tokens, steps });
        break;
      }
    }
  }

  /** Adds a subagent's entry after its `task` call and that call's other subagents (at
   * the end when the call is not shown, as for a /task's steps). */
  private insertAfterFamily(parentCallId: string, entry: Omit<EntryOf<'subagent'>, 'id' | 'rev'>): EntryOf<'subagent'> {
    let at = -1;
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const x = this.entries[i];
      if (x.kind === 'tool' && x.callId === parentCallId) {
        at = i;
        break;
      }
    }
    if (at >= 0) {
      while (at + 1 < this.entries.length) {
        const next = this.entries[at + 1];
        if (next.kind !== 'subagent' || next.parentCallId !== parentCallId) break;
        at++;
      }
    }
    const full = { ...entry, id: this.nextId++, rev: 1 } as EntryOf<'subagent'>;
    if (at >= 0) this.entries.splice(at + 1, 0, full);
    else this.entries.push(full);
    return full;
  }

  private bindPendingUser(sub: string | undefined): void {
    const pending = this.entries.find((e): e is EntryOf<'user'> => e.kind === 'user' && e.pending);
    if (pending) this.touch(pending, { pending: false, submissionId: sub });
  }

  private openShell(sub: string | undefined, command = ''): EntryOf<'shell'> {
    const open = this.findLast('shell', (e) => e.submissionId === sub && !e.done);
    if (open) return open;
    return this.add({
      kind: 'shell',
      command,
      output: '',
      exitCode: null,
      done: false,
      truncated: false,
      timedOut: false,
      startedAt: this.now(),
      submissionId: sub,
    }) as EntryOf<'shell'>;
  }

  /** Removes the assistant/reasoning text still streaming for `sub` (the current step's). */
  private dropOpenStreams(sub: string | undefined): void {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i];
      if ((e.kind === 'assistant' || e.kind === 'reasoning') && !e.done && e.submissionId === sub) this.entries.splice(i, 1);
    }
  }

  private closeStreams(sub: string | undefined, only?: 'assistant' | 'reasoning'): void {
    for (const e of this.entries) {
      if ((e.kind === 'assistant' || e.kind === 'reasoning') && !e.done && e.submissionId === sub) {
        if (!only || e.kind === only) this.touch(e, { done: true });
      }
    }
  }

  private findLast<K extends EntryKind>(kind: K, pred: (e: EntryOf<K>) => boolean): EntryOf<K> | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i];
      if (e.kind === kind && pred(e as EntryOf<K>)) return e as EntryOf<K>;
    }
    return undefined;
  }

  private add(entry: NewEntry): Entry {
    const full = { ...entry, id: this.nextId++, rev: 1 } as Entry;
    this.entries.push(full);
    return full;
  }

  private touch<E extends Entry>(entry: E, patch: Partial<E>): void {
    Object.assign(entry, patch);
    entry.rev++;
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }
}

/** A hook's decision in words (`hookRan.decision`). */
const HOOK_DECISIONS: Record<string, string> = {
  allow: 'allowed',
  deny: 'denied',
  ask: 'asked you',
  block: 'blocked',
  none: 'no decision',
  failed: 'failed',
};

function lastOpen(steps: readonly SubagentStep[]): number {
  for (let i = steps.length - 1; i >= 0; i--) if (!steps[i].done) return i;
  return -1;
}

export function shortId(id: string | null | undefined): string {
  return id ? id.slice(0, 8) : '';
}
