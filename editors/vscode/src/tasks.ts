/**
 * The task board MODEL behind the Tasks view: the `/task`s of the workspace (contract
 * section 14), from `taskUpdated` events (counts, percentage, tokens: live) and from the
 * `data` of `/task status` and `/task list` (steps, ETA). Pure TypeScript, no `vscode`.
 */

export interface TaskStep {
  id: string;
  title: string;
  status: string;
  attempts: number;
  tokens: number;
}

export interface TaskInfo {
  id: string;
  goal: string;
  status: string;
  steps: TaskStep[];
  completed: number;
  failed: number;
  skipped: number;
  total: number;
  percentage: number;
  tokensUsed: number;
  budget: number;
  elapsedSeconds: number;
  etaSeconds: number | null;
  report: string | null;
}

const num = (v: unknown, d = 0): number => (typeof v === 'number' && Number.isFinite(v) ? v : d);
const str = (v: unknown, d = ''): string => (typeof v === 'string' ? v : d);

function taskOf(raw: Record<string, unknown>): TaskInfo | null {
  if (typeof raw.id !== 'string' || !raw.id) return null;
  const steps = Array.isArray(raw.steps) ? raw.steps : [];
  return {
    id: raw.id,
    goal: str(raw.goal),
    status: str(raw.status, 'unknown'),
    steps: steps
      .filter((s): s is Record<string, unknown> => typeof s === 'object' && s !== null)
      .map((s) => ({ id: str(s.id), title: str(s.title), status: str(s.status, 'pending'), attempts: num(s.attempts), tokens: num(s.tokens) })),
    completed: num(raw.completed),
    failed: num(raw.failed),
    skipped: num(raw.skipped),
    total: num(raw.total),
    percentage: num(raw.percentage),
    tokensUsed: num(raw.tokensUsed),
    budget: num(raw.budget),
    elapsedSeconds: num(raw.elapsedSeconds),
    etaSeconds: typeof raw.etaSeconds === 'number' ? raw.etaSeconds : null,
    report: typeof raw.report === 'string' ? raw.report : null,
  };
}

export class TaskBoard {
  private readonly tasks = new Map<string, TaskInfo>();
  private order: string[] = []; // newest first
  private readonly listeners: Array<() => void> = [];

  onDidChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  list(): TaskInfo[] {
    return this.order.map((id) => this.tasks.get(id)).filter((t): t is TaskInfo => !!t);
  }

  get(id: string): TaskInfo | undefined {
    return this.tasks.get(id);
  }

  /** A `taskUpdated` event: returns the task's id (its steps are worth fetching), else null. */
  applyEvent(ev: Record<string, unknown>): string | null {
    if (ev.type !== 'taskUpdated' || typeof ev.taskId !== 'string' || !ev.taskId) return null;
    const known = this.tasks.get(ev.taskId);
    const t: TaskInfo = known ?? {
      id: ev.taskId,
      goal: '',
      status: 'planning',
      steps: [],
      completed: 0,
      failed: 0,
      skipped: 0,
      total: 0,
      percentage: 0,
      tokensUsed: 0,
      budget: 0,
      elapsedSeconds: 0,
      etaSeconds: null,
      report: null,
    };
    t.status = str(ev.status, t.status);
    t.completed = num(ev.completed, t.completed);
    t.failed = num(ev.failed, t.failed);
    t.total = num(ev.total, t.total);
    t.percentage = num(ev.percentage, t.percentage);
    t.tokensUsed = num(ev.tokensUsed, t.tokensUsed);
    this.put(t, !known);
    this.changed();
    return t.id;
  }

  /** The `data` of a result: `{kind: "task"}` (one) or `{kind: "tasks"}` (the list). */
  applyData(data: unknown): boolean {
    if (typeof data !== 'object' || data === null) return false;
    const d = data as Record<string, unknown>;
    if (d.kind === 'task') {
      const t = taskOf(d);
      if (!t) return false;
      this.put(t, !this.tasks.has(t.id));
    } else if (d.kind === 'tasks' && Array.isArray(d.tasks)) {
      const fresh = d.tasks.map((x) => (typeof x === 'object' && x !== null ? taskOf(x as Record<string, unknown>) : null));
      const list = fresh.filter((t): t is TaskInfo => !!t);
      for (const t of list) this.tasks.set(t.id, t);
      // the server's order (newest first), then any we know it did not list
      this.order = [...list.map((t) => t.id), ...this.order.filter((id) => !list.some((t) => t.id === id))];
    } else return false;
    this.changed();
    return true;
  }

  private put(t: TaskInfo, isNew: boolean): void {
    this.tasks.set(t.id, t);
    if (isNew) this.order = [t.id, ...this.order.filter((id) => id !== t.id)];
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }
}

export function formatDuration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds) || seconds < 0) return '';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

export function formatCount(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(n >= 100000 ? 0 : 1)}k` : String(n);
}

/** The line beside a task's goal: `running · 3/12 · 25% · 12.3k tokens · ETA 1m 20s`. */
export function taskDescription(t: TaskInfo): string {
  const parts = [t.status];
  if (t.total) parts.push(`${t.completed}/${t.total}`, `${t.percentage}%`);
  if (t.failed) parts.push(`${t.failed} failed`);
  if (t.tokensUsed) parts.push(`${formatCount(t.tokensUsed)}${t.budget ? `/${formatCount(t.budget)}` : ''} tokens`);
  const eta = t.status === 'running' ? formatDuration(t.etaSeconds) : '';
  if (eta) parts.push(`ETA ${eta}`);
  return parts.join(' · ');
}

/** The line beside a step's title: `running · attempt 2 · 1.2k tokens`. */
export function stepDescription(s: TaskStep): string {
  const parts = [s.status];
  if (s.attempts > 1) parts.push(`attempt ${s.attempts}`);
  if (s.tokens) parts.push(`${formatCount(s.tokens)} tokens`);
  return parts.join(' · ');
}

/** A codicon per state (the view maps it to a ThemeIcon). */
export function statusIcon(status: string): string {
  switch (status) {
    case 'completed':
      return 'pass';
    case 'failed':
      return 'error';
    case 'running':
    case 'planning':
      return 'sync~spin';
    case 'skipped':
      return 'debug-step-over';
    case 'paused':
      return 'debug-pause';
    default:
      return 'circle-outline';
  }
}
