/** The status-bar item: the session's model, and a spinner while a request runs. */
import * as vscode from 'vscode';
import type { Controller } from './controller';
import { shortId } from './transcript';

export function statusText(model: string | null, busy: boolean): string {
  return `${busy ? '$(loading~spin)' : '$(hubot)'} ${model ?? 'Coder'}`;
}

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);

  constructor(private readonly controller: Controller) {
    this.item.command = 'coderLs.showPanel';
    controller.onDidChange(() => this.update());
    this.update();
    this.item.show();
  }

  update(): void {
    const { state } = this.controller.transcript;
    this.item.text = statusText(state.model, this.controller.busy);
    const lines = [
      `Coder — ${this.controller.busy ? 'running… (Coder: Stop to interrupt)' : 'idle'}`,
      `Model: ${state.model ?? '?'}${state.provider ? ` (${state.provider})` : ''}`,
      `Session: ${shortId(state.sessionId) || '—'}`,
    ];
    if (state.preset) lines.push(`Permissions: ${state.preset}`);
    if (state.context) lines.push(`Context: ${state.context.usedTokens} / ${state.context.limitTokens} tokens`);
    this.item.tooltip = lines.join('\n');
  }

  dispose(): void {
    this.item.dispose();
  }
}
