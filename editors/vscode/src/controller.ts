/**
 * The client logic between a transport (the language client in VS Code, a raw
 * JSON-RPC connection in the integration test) and the transcript model:
 * sends commands with the current sessionId, applies results and events,
 * keeps the slash-command catalog. No `vscode` import.
 */
import type { ImageAttachment } from './attachments';
import { type CommandInfo, type CommandResult, isCommandResult } from './protocol';
import { catalogOf } from './results';
import { TaskBoard } from './tasks';
import { Transcript } from './transcript';

/** How long the task board waits after a `taskUpdated` before it asks for the steps. */
export const TASK_REFRESH_MS = 250;

export interface Transport {
  /**
   * `workspace/executeCommand` with one object argument; resolves to the raw result.
   * `onProgress` (optional) gets the messages of the request's work-done progress.
   */
  executeCommand(command: string, arg: Record<string, unknown>, onProgress?: (message: string) => void): Promise<unknown>;
}

/** Shows a request while it runs (the extension: a cancellable notification). */
export type ProgressUi = <T>(title: string, work: (sink: { report(message: string): void }) => Promise<T>) => Thenable<T>;

export interface RunOptions {
  /** Show this line as the user's input in the transcript. */
  echo?: string;
  /** Do not put the result in the transcript (background look-ups). */
  silent?: boolean;
  /** Show the request with `progressUi` under this title while it runs. */
  progress?: string;
}

export class Controller {
  readonly transcript = new Transcript();
  /** The workspace's `/task`s (the Tasks view). */
  readonly tasks = new TaskBoard();
  catalog: CommandInfo[] = [];
  /** What the running request does now (its last work-done progress message): the chat shows it. */
  progress = '';
  private inFlight = 0;
  private readonly listeners: Array<() => void> = [];
  /** Set by the extension: how a long request is shown (none in tests). */
  progressUi: ProgressUi | undefined;

  private readonly subscribers = new Set<() => void>();
  /** Called with each result the user asked for (not silent look-ups): e.g. `/diff turn` opens a diff editor. */
  readonly resultListeners: Array<(result: CommandResult) => void> = [];
  private readonly taskTimers = new Map<string, ReturnType<typeof setTimeout>>();

  constructor(private readonly transport: Transport) {
    this.transcript.onDidChange(() => this.notifySubscribers());
  }

  get sessionId(): string | null {
    return this.transcript.state.sessionId;
  }

  /** True while at least one (non-silent) request has not answered. */
  get busy(): boolean {
    return this.inFlight > 0;
  }

  /** True while the server waits for the user's answer to an approval question. */
  get waitingForApproval(): boolean {
    return this.transcript.entries.some(
      (e) => (e.kind === 'approval' && e.decision === null) || (e.kind === 'tool' && !!e.approval && e.approval.decision === null),
    );
  }

  onDidChange(listener: () => void): void {
    this.listeners.push(listener);
    this.transcript.onDidChange(listener);
  }

  /** Like onDidChange; returns a function that unsubscribes. */
  subscribe(listener: () => void): () => void {
    const own = (): void => listener(); // a distinct entry even if subscribed twice
    this.subscribers.add(own);
    return () => void this.subscribers.delete(own);
  }

  private notifySubscribers(): void {
    for (const l of [...this.subscribers]) l();
  }

  /** A `coder/event` notification. */
  handleEvent(event: unknown): void {
    if (typeof event !== 'object' || event === null) return;
    this.transcript.applyEvent(event as Parameters<Transcript['applyEvent']>[0]);
    const taskId = this.tasks.applyEvent(event as Record<string, unknown>);
    if (taskId) this.scheduleTaskRefresh(taskId);
    if (this.transcript.commandsStale) {
      this.transcript.commandsStale = false;
      void this.refreshCatalog();
    }
    this.refreshModelIfStale();
  }

  /** What the user typed: `/cmd`, `!shell` or a prompt, through `coder.input`. */
  submit(
    text: string,
    context?: Record<string, unknown>,
    extras?: { images?: ImageAttachment[]; pastes?: string[] },
  ): Promise<CommandResult> {
    const arg: Record<string, unknown> = { text };
    if (context) arg.context = context;
    if (extras?.images?.length) arg.images = extras.images.map(({ data, mediaType }) => ({ data, mediaType }));
    if (extras?.pastes?.length) arg.pastes = extras.pastes;
    return this.run('coder.input', arg, { echo: text, progress: progressTitle(text) });
  }

  /** Edit and resend: `text` replaces the user message `submissionId`, in a fork of the
   * session before it (coder.input `replaces`); the transcript drops what the fork left out. */
  async resend(text: string, submissionId: string): Promise<CommandResult> {
    this.transcript.beginResend(submissionId);
    try {
      return await this.run('coder.input', { text, replaces: submissionId }, { echo: text, progress: progressTitle(text) });
    } finally {
      this.transcript.endResend();
    }
  }

  async run(command: string, arg: Record<string, unknown> = {}, opts: RunOptions = {}): Promise<CommandResult> {
    const full = { ...arg };
    if (this.sessionId && full.sessionId === undefined) full.sessionId = this.sessionId;
    if (opts.echo !== undefined) this.transcript.addUserInput(opts.echo);
    if (!opts.silent) this.bump(1);
    let result: CommandResult;
    try {
      const ui = opts.progress !== undefined ? this.progressUi : undefined;
      const note = (message: string): void => {
        this.progress = message;
        this.emit();
      };
      const raw = ui
        ? await ui(opts.progress ?? '', (sink) =>
            this.transport.executeCommand(command, full, (m) => {
              note(m);
              sink.report(m);
            }),
          )
        : await this.transport.executeCommand(command, full, opts.silent ? undefined : note);
      result = isCommandResult(raw) ? raw : rpcError(this.sessionId, `unexpected result from ${command}`);
    } catch (err) {
      result = rpcError(this.sessionId, err instanceof Error ? err.message : String(err));
    } finally {
      if (!opts.silent) this.bump(-1);
    }
    this.tasks.applyData(result.data);
    if (!opts.silent) this.transcript.applyResult(result);
    if (!opts.silent) for (const l of [...this.resultListeners]) l(result);
    else if (result.sessionId && !this.sessionId) this.transcript.state.sessionId = result.sessionId;
    this.refreshModelIfStale();
    return result;
  }

  /** A request the controller did not send (a code action VS Code runs itself): counted
   * as running while it lasts, so the chat and the status bar show it. */
  async during<T>(work: () => Promise<T>): Promise<T> {
    this.bump(1);
    try {
      return await work();
    } finally {
      this.bump(-1);
    }
  }

  /** `coder.interrupt` for the current session. */
  interrupt(): Promise<CommandResult> {
    return this.run('coder.interrupt', {}, { silent: true });
  }

  /** Stops one subagent (`coder.interrupt {agentId}`); its parent and siblings go on. */
  async stopAgent(agentId: string): Promise<CommandResult> {
    this.transcript.markStopping(agentId);
    return this.run('coder.interrupt', { agentId }, { silent: true });
  }

  /** The workspace's tasks (`/task list`), for the Tasks view. */
  async refreshTasks(): Promise<void> {
    await this.run('coder.input', { text: '/task list' }, { silent: true });
  }

  /** One task's steps and ETA (`/task status <id>`). */
  async refreshTask(id: string): Promise<void> {
    await this.run('coder.input', { text: `/task status ${id}` }, { silent: true });
  }

  /** Events come in bursts (a step starts as another ends): one look-up per burst. */
  private scheduleTaskRefresh(id: string): void {
    if (this.taskTimers.has(id)) return;
    this.taskTimers.set(
      id,
      setTimeout(() => {
        this.taskTimers.delete(id);
        void this.refreshTask(id).catch(() => undefined);
      }, TASK_REFRESH_MS),
    );
  }

  /** Stops pending look-ups (the extension is going away). */
  dispose(): void {
    for (const t of this.taskTimers.values()) clearTimeout(t);
    this.taskTimers.clear();
  }

  async refreshCatalog(): Promise<CommandInfo[]> {
    const result = await this.run('coder.listCommands', {}, { silent: true });
    if (result.mode !== 'error') {
      this.catalog = catalogOf(result);
      this.emit();
    }
    return this.catalog;
  }

  /** Looks up the current model without writing to the transcript. */
  async refreshModel(): Promise<void> {
    const result = await this.run('coder.model', {}, { silent: true });
    const d = result.data as { kind?: string; current?: string; provider?: string } | null | undefined;
    if (d?.kind === 'model' && d.current) {
      this.transcript.state.model = d.current;
      this.transcript.state.provider = d.provider ?? null;
      this.emit();
    }
  }

  private refreshModelIfStale(): void {
    if (!this.transcript.modelStale) return;
    this.transcript.modelStale = false;
    void this.refreshModel().catch(() => undefined);
  }

  private bump(delta: number): void {
    this.inFlight = Math.max(0, this.inFlight + delta);
    if (this.inFlight === 0) this.progress = '';
    this.emit();
  }

  private emit(): void {
    for (const l of this.listeners) l();
    this.notifySubscribers();
  }
}

/** The notification title of a submission: `Coder: /help`, `Coder: !npm test`, `Coder`. */
export function progressTitle(text: string): string {
  const first = text.trim().split('\n')[0];
  if (!first.startsWith('/') && !first.startsWith('!')) return 'Coder';
  return `Coder: ${first.length > 40 ? `${first.slice(0, 39)}…` : first}`;
}

function rpcError(sessionId: string | null, message: string): CommandResult {
  return {
    sessionId: sessionId ?? '',
    submissionId: '',
    mode: 'error',
    status: 'failed',
    reply: message,
    error: { code: 'rpcError', message },
  };
}
