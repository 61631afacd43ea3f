/** The chat panel: a webview view that renders the transcript model. */
import * as vscode from 'vscode';
import { contextLabel, type EditorContext, type ImageAttachment } from './attachments';
import type { Controller } from './controller';
import { relPath } from './paths';
import type { EditReviews } from './review';
import { decisionSummary } from './reviewModel';
import type { FromWebview, ReviewView, ToWebview } from './webview/messages';
import { plain } from './plainText';

export const VIEW_ID = 'coderLs.chat';

export interface InputExtras {
  context?: EditorContext;
  images?: ImageAttachment[];
  pastes?: string[];
}

export interface ChatActions {
  submit(text: string, extras?: InputExtras): Promise<void>;
  interrupt(): Promise<void>;
  /** The Stop of one subagent (its entry's button). */
  stopAgent(agentId: string): Promise<void>;
  newSession(): Promise<void>;
  /** A past user message's "Edit and resend" (its text, to edit first). */
  resend?(submissionId: string, text: string): Promise<void>;
}

export class ChatViewProvider implements vscode.WebviewViewProvider {
  private view: vscode.WebviewView | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The chip the user removed: its label, until the editor or the selection changes. */
  private dropped: string | undefined;
  private readonly visibilityListeners: Array<() => void> = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: Controller,
    private readonly actions: ChatActions,
    private readonly reviews?: EditReviews,
  ) {
    controller.onDidChange(() => this.schedule());
    vscode.window.onDidChangeActiveTextEditor(() => this.contextChanged());
    vscode.window.onDidChangeTextEditorSelection(() => this.contextChanged());
    // the transcript names files relative to the workspace folders
    const roots = (): void => controller.transcript.setRoots((vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath));
    roots();
    vscode.workspace.onDidChangeWorkspaceFolders?.(roots);
    reviews?.onDidChangePending(() => this.postReviews());
  }

  /** Whether the chat is on screen now (it then shows what runs: no notification). */
  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  onDidChangeVisibility(listener: () => void): void {
    this.visibilityListeners.push(listener);
  }

  private visibilityChanged(): void {
    for (const l of this.visibilityListeners) l();
  }

  /** The reviews waiting for the user, as the chat's line above the input shows them. */
  private postReviews(): void {
    const roots = this.controller.transcript.state.roots;
    const reviews: ReviewView[] = (this.reviews?.pending() ?? []).map((r) => ({
      id: r.id,
      label: r.label,
      files: r.files.map((f) => relPath(f.uri, roots)),
      ...decisionSummary(r.files),
    }));
    this.post({ type: 'reviews', reviews });
  }

  /** The active file and its selection (sent with every input unless its chip was removed). */
  editorContext(): EditorContext | undefined {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.uri.scheme !== 'file') return undefined;
    const ctx: EditorContext = { uri: editor.document.uri.toString() };
    if (!editor.selection.isEmpty) {
      const { start, end } = editor.selection;
      ctx.range = { start: { line: start.line, character: start.character }, end: { line: end.line, character: end.character } };
    }
    return this.dropped === contextLabel(ctx) ? undefined : ctx;
  }

  private contextChanged(): void {
    this.dropped = undefined;
    this.postContext();
  }

  private postContext(): void {
    const ctx = this.editorContext();
    this.post({ type: 'context', label: ctx ? contextLabel(ctx) : null });
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist, media] };
    view.webview.html = this.html(view.webview);
    view.webview.onDidReceiveMessage((msg: FromWebview) => void this.receive(msg));
    view.onDidDispose(() => {
      this.view = undefined;
      this.visibilityChanged();
    });
    view.onDidChangeVisibility(() => {
      if (view.visible) this.flush();
      this.visibilityChanged();
    });
    this.visibilityChanged();
  }

  /**
   * Shows the chat. `preserveFocus`: the focus stays where it is (the editor the user acted
   * in: a code lens, a code action). VS Code cancels an editor's pending code-lens update when
   * the editor loses focus (`onDidBlurEditorText` in its CodeLens controller) and asks again
   * only when it gets the focus back: taking the focus right after the server's
   * `workspace/codeLens/refresh` left a reverted hunk's lens drawn (issue 34's lens step).
   */
  async reveal(opts: { preserveFocus?: boolean } = {}): Promise<void> {
    if (opts.preserveFocus && this.view) {
      this.view.show(true);
      return;
    }
    const editor = opts.preserveFocus ? vscode.window.activeTextEditor : undefined;
    await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
    // the view was not made yet: only its focus command makes it; the focus goes back
    if (editor) {
      await vscode.window.showTextDocument(editor.document, { viewColumn: editor.viewColumn, preserveFocus: false });
      return;
    }
    this.post({ type: 'focus' });
  }

  private async receive(msg: FromWebview): Promise<void> {
    switch (msg.type) {
      case 'ready':
        this.flush();
        if (!this.controller.catalog.length) await this.controller.refreshCatalog().catch(() => undefined);
        this.post({ type: 'catalog', commands: this.controller.catalog });
        break;
      case 'submit':
        await this.actions.submit(msg.text, { context: this.editorContext(), images: msg.images, pastes: msg.pastes });
        break;
      case 'complete': {
        // `@` completion: answered from the server's cached file list in a few ms
        const r = await this.controller.run('coder.completeInput', { text: msg.text, position: msg.position }, { silent: true });
        const data = r.data as { kind?: string; start?: number; items?: { label: string; kind: string; detail?: string }[] } | undefined;
        if (data?.kind === 'completions') this.post({ type: 'completions', seq: msg.seq, start: data.start ?? 0, items: data.items ?? [] });
        break;
      }
      case 'dropContext': {
        const ctx = this.editorContext();
        this.dropped = ctx ? contextLabel(ctx) : undefined;
        this.postContext();
        break;
      }
      case 'interrupt':
        await this.actions.interrupt();
        break;
      case 'stopAgent':
        if (msg.agentId) await this.actions.stopAgent(msg.agentId);
        break;
      case 'newSession':
        await this.actions.newSession();
        break;
      case 'resend':
        if (msg.submissionId) await this.actions.resend?.(msg.submissionId, msg.text);
        break;
      case 'openFile':
        await openUri(msg.uri);
        break;
      case 'code':
        if (msg.action === 'copy') await vscode.env.clipboard.writeText(msg.text);
        else await insertAtCursor(msg.text);
        break;
      case 'review':
        await this.reviews?.act(msg.id, msg.action);
        break;
      case 'plan': {
        this.controller.transcript.answerPlan(msg.submissionId, msg.action);
        const arg: Record<string, unknown> = { submissionId: msg.submissionId, action: msg.action };
        if (msg.feedback) arg.feedback = msg.feedback;
        if (msg.mode) arg.mode = msg.mode;
        await this.controller.run('coder.plan', arg);
        break;
      }
    }
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => this.flush(), 30);
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    // what runs now, as the notification would say it (the chat stands in for it)
    const progress = this.controller.waitingForApproval ? 'Waiting for your answer' : this.controller.progress;
    this.post({ type: 'snapshot', snapshot: this.controller.transcript.snapshot(), busy: this.controller.busy, progress });
    this.post({ type: 'catalog', commands: this.controller.catalog });
    this.postContext();
    this.postReviews();
  }

  private post(msg: ToWebview): void {
    void this.view?.webview.postMessage(msg);
  }

  private html(webview: vscode.Webview): string {
    const nonce = Array.from({ length: 32 }, () => Math.floor(Math.random() * 36).toString(36)).join('');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'chat.css'));
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `img-src ${webview.cspSource} https: data:`,
      `script-src 'nonce-${nonce}'`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link href="${style}" rel="stylesheet"><title>Coder</title></head>
<body>
<div id="todos" hidden></div>
<div id="transcript" role="log" aria-live="polite"></div>
<div id="composer">
  <ul id="completions" role="listbox" hidden></ul>
  <div id="review" hidden></div>
  <div id="chips"></div>
  <textarea id="input" rows="3" placeholder="Ask Coder — /command, !shell · Enter to send, Shift+Enter for a newline"></textarea>
  <div id="bar"><span id="status" role="status"></span>
    <span id="usage" hidden><meter id="meter" min="0" max="100" low="60" high="85" optimum="0" value="0"></meter><span id="usage-pct"></span></span>
    <span class="buttons"><button id="new" title="New session">New</button>
    <button id="stop" title="Stop what runs (coder.interrupt)" disabled>Stop</button>
    <button id="send" title="Send (Enter)">Send</button></span></div>
</div>
<script nonce="${nonce}" src="${script}"></script>
</body></html>`;
  }
}

/** A code block's Insert: the code at the cursor (replacing the selection) of the editor
 * the user last worked in. */
export async function insertAtCursor(text: string): Promise<void> {
  const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
  if (!editor) {
    void vscode.window.showInformationMessage('Open a file in an editor to insert the code at its cursor.');
    return;
  }
  await editor.edit((edit) => {
    for (const sel of editor.selections) edit.replace(sel, text);
  });
  await vscode.window.showTextDocument(editor.document, { viewColumn: editor.viewColumn, preserveFocus: false });
}

/** Opens an edited file (a `file:` URI or a workspace-relative path) in an editor. */
export async function openUri(target: string): Promise<void> {
  let uri: vscode.Uri;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) uri = vscode.Uri.parse(target);
  else {
    const root = vscode.workspace.workspaceFolders?.[0]?.uri;
    uri = root ? vscode.Uri.joinPath(root, target) : vscode.Uri.file(target);
  }
  try {
    await vscode.window.showTextDocument(uri, { preview: false });
  } catch (err) {
    void vscode.window.showErrorMessage(plain(`Cannot open ${target}: ${err instanceof Error ? err.message : String(err)}`));
  }
}
