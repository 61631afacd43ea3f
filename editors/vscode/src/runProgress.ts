/**
 * A Cancel button while a submission runs, shown only where the user would not see
 * otherwise that something runs. vscode-languageclient shows the server's work-done
 * progress as a status-bar spinner only (its Cancel appears after clicking it), so the
 * extension has its own notification (`window.withProgress`, location Notification,
 * cancellable); Cancel sends `coder.interrupt` for the session. The message follows the
 * server's progress reports, and says "Waiting for approval" while an approval is open.
 *
 * One notification at most, whatever runs at once (a code action while a prompt runs):
 * the `ProgressCenter` keeps one for all the runs. None while the chat is visible: the chat
 * shows what runs, with its own Stop. When the chat is hidden during a run, the
 * notification comes; when it shows again, the notification goes. The status-bar item
 * (src/statusBar.ts) is there either way.
 */
import * as vscode from 'vscode';
import { plain } from './plainText';

export interface ProgressSink {
  /** The server's `$/progress` message for the request's token. */
  report(message: string): void;
}

export interface RunHooks {
  /** Cancel pressed: interrupt the session. */
  interrupt(): Promise<unknown>;
  /** Whether an approval question is open now (checked on every change). */
  waitingForApproval(): boolean;
  /** Subscribe to state changes (approvals); returns an unsubscribe function. */
  onDidChange(listener: () => void): () => void;
  /** Whether the chat is on screen (it then shows the run itself). Absent: never. */
  chatVisible?(): boolean;
}

interface Run {
  title: string;
  message: string;
}

interface Shown {
  /** Set once VS Code runs the notification's task (until then, `last` waits). */
  progress?: vscode.Progress<{ message?: string }>;
  /** Ends the notification. */
  close(): void;
  last: string;
  cancelled: boolean;
}

export class ProgressCenter {
  private readonly runs = new Map<number, Run>();
  private next = 1;
  private shown: Shown | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly hooks: RunHooks) {}

  /** Runs `work`; the notification shows while it (or another run) lasts and the chat is hidden. */
  async run<T>(title: string, work: (sink: ProgressSink) => Promise<T>): Promise<T> {
    const id = this.next++;
    const run: Run = { title, message: '' };
    this.runs.set(id, run);
    this.unsubscribe ??= this.hooks.onDidChange(() => this.update());
    this.update();
    try {
      return await work({
        report: (message) => {
          run.message = message;
          this.update();
        },
      });
    } finally {
      this.runs.delete(id);
      if (!this.runs.size) {
        this.unsubscribe?.();
        this.unsubscribe = undefined;
      }
      this.update();
    }
  }

  /** The chat was shown or hidden: the notification follows. */
  visibilityChanged(): void {
    this.update();
  }

  private wanted(): boolean {
    return this.runs.size > 0 && !this.hooks.chatVisible?.();
  }

  private update(): void {
    if (!this.wanted()) {
      const shown = this.shown;
      this.shown = undefined;
      shown?.close();
      return;
    }
    if (!this.shown) this.open();
    this.refresh();
  }

  private refresh(): void {
    const shown = this.shown;
    if (!shown || shown.cancelled) return;
    const latest = [...this.runs.values()].pop();
    const message = this.hooks.waitingForApproval() ? 'Waiting for approval' : (latest?.message ?? '');
    if (message === shown.last) return;
    shown.last = message;
    // plain: the messages quote what the model runs
    shown.progress?.report({ message: plain(message) });
  }

  private open(): void {
    const first = [...this.runs.values()][0];
    let close: () => void = () => undefined;
    const closed = new Promise<void>((resolve) => (close = resolve));
    const shown: Shown = { close, last: '', cancelled: false };
    this.shown = shown;
    // plain: the title quotes the input
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: plain(first?.title ?? 'Coder'), cancellable: true },
      async (progress, token) => {
        shown.progress = progress;
        if (shown.last) progress.report({ message: plain(shown.last) });
        const sub = token.onCancellationRequested(() => {
          shown.cancelled = true;
          progress.report({ message: 'Cancelling…' });
          void this.hooks.interrupt().catch(() => undefined);
        });
        try {
          await closed;
        } finally {
          sub.dispose();
        }
      },
    );
  }
}

/** Runs `work` under its own center (one run: the notification of that run alone). */
export function withCancel<T>(title: string, hooks: RunHooks, work: (sink: ProgressSink) => Promise<T>): Promise<T> {
  return new ProgressCenter(hooks).run(title, work);
}
