/** The status-bar item: the session's model, and a spinner while a request runs. */
import * as vscode from 'vscode';
import type { Controller } from './controller';
import { shortId } from './transcript';

/**
 * `$(hubot) <model>` when idle, the spinner while a request runs, and "Waiting
 * for approval" while the server waits for the user's answer. The model is the
 * one the server reported (`modelChanged`, `/model` data), with its provider
 * when that is not Anthropic (`scripted` replays a file: no model runs).
 */
export function statusText(model: string | null, busy: boolean, waiting = false, provider: string | null = null): string {
  if (waiting) return '$(question) Waiting for approval';
  const name = model ? (provider && provider !== 'anthropic' ? `${model} (${provider})` : model) : 'Coder';
  return `${busy ? '$(loading~spin)' : '$(hubot)'} ${name}`;
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
    const waiting = this.controller.waitingForApproval;
    this.item.text = statusText(state.model, this.controller.busy, waiting, state.provider);
    const doing = waiting ? 'waiting for approval' : this.controller.busy ? 'running… (Coder: Stop to interrupt)' : 'idle';
    const lines = [
      `Coder — ${doing}`,
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
