/**
 * Notifications (contract section 22): the server is told whether VS Code's window has the
 * focus (`coder.focus {focused}`, from `window.onDidChangeWindowState`), and while it has
 * not, a turn that ends or waits for the user comes back as `coder/notify {kind, message}`,
 * shown here as a notification (we declare `capabilities.notify`: the server then sends no
 * `window/showMessage` for it). Kept free of the `vscode` module: the window is handed in.
 */

import { plain } from './plainText';

export const FOCUS_COMMAND = 'coder.focus';
export const NOTIFY_METHOD = 'coder/notify';

export interface NotifyParams {
  kind: 'turnFinished' | 'approval' | 'question' | 'review' | string;
  message: string;
  sessionId?: string;
  submissionId?: string;
  status?: string;
}

interface Disposable {
  dispose(): unknown;
}

/** The part of `vscode.window` this needs. */
export interface FocusWindow {
  readonly state: { readonly focused: boolean };
  onDidChangeWindowState(listener: (state: { readonly focused: boolean }) => unknown): Disposable;
  showInformationMessage(message: string, ...items: string[]): PromiseLike<string | undefined>;
  showWarningMessage(message: string, ...items: string[]): PromiseLike<string | undefined>;
}

export const SHOW_CHAT = 'Show Chat';

/**
 * Send the window's focus now, and again each time it changes (only when it changes:
 * VS Code repeats the state on other window events). A failed send is logged, never thrown.
 */
export function followFocus(
  window: FocusWindow,
  send: (focused: boolean) => PromiseLike<unknown> | Promise<unknown>,
  log: (message: string) => void = () => undefined,
): Disposable {
  let last: boolean | undefined;
  const tell = (focused: boolean): void => {
    if (focused === last) return;
    last = focused;
    Promise.resolve(send(focused)).catch((err: unknown) => log(`coder.focus failed: ${err instanceof Error ? err.message : String(err)}`));
  };
  tell(window.state.focused);
  return window.onDidChangeWindowState((state) => tell(state.focused));
}

/** `coder/notify` as a VS Code notification; its button reveals the chat. The message quotes
 * the agent's last words: `plain` (src/plainText.ts), so no link in it is live. */
export async function showNotify(params: NotifyParams, window: FocusWindow, revealChat: () => unknown): Promise<void> {
  const failed = params.kind === 'turnFinished' && params.status === 'failed';
  const show = failed ? window.showWarningMessage.bind(window) : window.showInformationMessage.bind(window);
  const pick = await show(plain(params.message), SHOW_CHAT);
  if (pick === SHOW_CHAT) revealChat();
}
