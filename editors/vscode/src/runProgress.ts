/**
 * A Cancel button while a submission runs. vscode-languageclient shows the
 * server's work-done progress as a status-bar spinner only (its Cancel appears
 * after clicking it), so the extension shows its own notification with
 * `window.withProgress({location: Notification, cancellable: true})`; Cancel
 * sends `coder.interrupt` for the session. The message follows the server's
 * progress reports, and says "Waiting for approval" while an approval is open.
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
}

/** Runs `work` under a cancellable notification titled `title`. */
export function withCancel<T>(title: string, hooks: RunHooks, work: (sink: ProgressSink) => Promise<T>): Thenable<T> {
  return vscode.window.withProgress(
    // plain: the title quotes the input, the messages quote what the model runs
    { location: vscode.ProgressLocation.Notification, title: plain(title), cancellable: true },
    async (progress, token) => {
      let last = '';
      let cancelled = false;
      const show = (message: string): void => {
        if (message === last) return;
        last = message;
        progress.report({ message: plain(message) });
      };
      let serverMessage = '';
      const refresh = (): void => {
        if (cancelled) return;
        show(hooks.waitingForApproval() ? 'Waiting for approval' : serverMessage);
      };
      const unsubscribe = hooks.onDidChange(refresh);
      const sub = token.onCancellationRequested(() => {
        cancelled = true;
        show('Cancelling…');
        void hooks.interrupt().catch(() => undefined);
      });
      try {
        return await work({
          report: (message) => {
            serverMessage = message;
            refresh();
          },
        });
      } finally {
        unsubscribe();
        sub.dispose();
      }
    },
  );
}
