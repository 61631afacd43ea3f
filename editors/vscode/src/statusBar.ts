/** The status-bar item: the session's model, and a spinner while a request runs. */
import * as vscode from 'vscode';
import type { Controller } from './controller';
import { shortId } from './transcript';

/** The share of the context window in use, rounded (`contextUsage`), or null when unknown. */
export function contextPercent(context: { usedTokens: number; limitTokens: number } | null): number | null {
  if (!context || !(context.limitTokens > 0)) return null;
  return Math.min(100, Math.round((100 * context.usedTokens) / context.limitTokens));
}

/**
 * `$(hubot) <model>` when idle, the spinner while a request runs, and "Waiting
 * for approval" while the server waits for the user's answer. The model is the
 * one the server reported (`modelChanged`, `/model` data), with its provider
 * when that is not Anthropic (`scripted` replays a file: no model runs), then the
 * share of the context window in use once the server reported it (`· 12%`).
 */
export function statusText(
  model: string | null,
  busy: boolean,
  waiting = false,
  provider: string | null = null,
  percent: number | null = null,
): string {
  if (waiting) return '$(question) Waiting for approval';
  const name = model ? (provider && provider !== 'anthropic' ? `${model} (${provider})` : model) : 'Coder';
  const used = percent === null ? '' : ` · ${percent}%`;
  return `${busy ? '$(loading~spin)' : '$(hubot)'} ${name}${used}`;
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
    const percent = contextPercent(state.context);
    this.item.text = statusText(state.model, this.controller.busy, waiting, state.provider, percent);
    const doing = waiting ? 'waiting for approval' : this.controller.busy ? 'running… (Coder: Stop to interrupt)' : 'idle';
    const lines = [
      `Coder — ${doing}`,
      `Model: ${state.model ?? '?'}${state.provider ? ` (${state.provider})` : ''}`,
      `Session: ${shortId(state.sessionId) || '—'}`,
    ];
    if (state.preset) lines.push(`Permissions: ${state.preset}`);
    if (state.context) {
      const { usedTokens, limitTokens } = state.context;
      lines.push(`Context: ${usedTokens} / ${limitTokens} tokens (${percent ?? 0}%; /context for the parts)`);
    }
    this.item.tooltip = lines.join('\n');
  }

  dispose(): void {
    this.item.dispose();
  }
}
