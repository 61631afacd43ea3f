/**
 * The client logic between a transport (the language client in VS Code, a raw
 * JSON-RPC connection in the integration test) and the transcript model:
 * sends commands with the current sessionId, applies results and events,
 * keeps the slash-command catalog. No `vscode` import.
 */
import { type CommandInfo, type CommandResult, isCommandResult } from './protocol';
import { catalogOf } from './results';
import { Transcript } from './transcript';

export interface Transport {
  /** `workspace/executeCommand` with one object argument; resolves to the raw result. */
  executeCommand(command: string, arg: Record<string, unknown>): Promise<unknown>;
}

export interface RunOptions {
  /** Show this line as the user's input in the transcript. */
  echo?: string;
  /** Do not put the result in the transcript (background look-ups). */
  silent?: boolean;
}

export class Controller {
  readonly transcript = new Transcript();
  catalog: CommandInfo[] = [];
  private inFlight = 0;
  private readonly listeners: Array<() => void> = [];

  constructor(private readonly transport: Transport) {}

  get sessionId(): string | null {
    return this.transcript.state.sessionId;
  }

  /** True while at least one (non-silent) request has not answered. */
  get busy(): boolean {
    return this.inFlight > 0;
  }

  onDidChange(listener: () => void): void {
    this.listeners.push(listener);
    this.transcript.onDidChange(listener);
  }

  /** A `coder/event` notification. */
  handleEvent(event: unknown): void {
    if (typeof event !== 'object' || event === null) return;
    this.transcript.applyEvent(event as Parameters<Transcript['applyEvent']>[0]);
    if (this.transcript.commandsStale) {
      this.transcript.commandsStale = false;
      void this.refreshCatalog();
    }
  }

  /** What the user typed: `/cmd`, `!shell` or a prompt, through `coder.input`. */
  submit(text: string, context?: Record<string, unknown>): Promise<CommandResult> {
    const arg: Record<string, unknown> = { text };
    if (context) arg.context = context;
    return this.run('coder.input', arg, { echo: text });
  }

  async run(command: string, arg: Record<string, unknown> = {}, opts: RunOptions = {}): Promise<CommandResult> {
    const full = { ...arg };
    if (this.sessionId && full.sessionId === undefined) full.sessionId = this.sessionId;
    if (opts.echo !== undefined) this.transcript.addUserInput(opts.echo);
    if (!opts.silent) this.bump(1);
    let result: CommandResult;
    try {
      const raw = await this.transport.executeCommand(command, full);
      result = isCommandResult(raw) ? raw : rpcError(this.sessionId, `unexpected result from ${command}`);
    } catch (err) {
      result = rpcError(this.sessionId, err instanceof Error ? err.message : String(err));
    } finally {
      if (!opts.silent) this.bump(-1);
    }
    if (!opts.silent) this.transcript.applyResult(result);
    else if (result.sessionId && !this.sessionId) this.transcript.state.sessionId = result.sessionId;
    return result;
  }

  /** `coder.interrupt` for the current session. */
  interrupt(): Promise<CommandResult> {
    return this.run('coder.interrupt', {}, { silent: true });
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

  private bump(delta: number): void {
    this.inFlight = Math.max(0, this.inFlight + delta);
    this.emit();
  }

  private emit(): void {
    for (const l of this.listeners) l();
  }
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
