/** What the user sees for a command result, and quick-pick items from `data`. Pure. */
import type { CommandInfo, CommandResult, ModelInfo, SessionInfo } from './protocol';

export type Presentation =
  /** `mode: "error"`: a user mistake → `window.showErrorMessage(message)`. */
  | { kind: 'error'; message: string }
  /** Anything else: the reply goes into the transcript (and the panel is revealed). */
  | { kind: 'transcript'; summary: string };

export function presentResult(result: CommandResult): Presentation {
  if (result.mode === 'error') {
    const message = result.error?.message || result.reply || 'coder-ls: the command failed';
    return { kind: 'error', message };
  }
  return { kind: 'transcript', summary: summarize(result) };
}

/** A one-line description (status bar tooltip, logs). */
export function summarize(result: CommandResult): string {
  const tail = result.status === 'completed' ? '' : ` (${result.status})`;
  switch (result.mode) {
    case 'raw':
      if (result.status === 'cancelled') return `$ ${result.command ?? ''} → cancelled`;
      return `$ ${result.command ?? ''} → ${result.exitCode === null || result.exitCode === undefined ? 'no exit code' : `exit ${result.exitCode}`}${tail}`;
    case 'command':
    case 'nl':
      return `${firstLine(result.reply) || result.mode}${tail}`;
    default:
      return `${result.error?.message ?? 'error'}${tail}`;
  }
}

function firstLine(text: string | undefined | null): string {
  const line = (text ?? '').split('\n').find((l) => l.trim()) ?? '';
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

export interface PickItem<T> {
  label: string;
  description?: string;
  detail?: string;
  value: T;
}

function dataOf<K extends string>(result: CommandResult, kind: K): Record<string, unknown> | null {
  const d = result.data as { kind?: string } | null | undefined;
  return d && d.kind === kind ? (d as Record<string, unknown>) : null;
}

export function catalogOf(result: CommandResult): CommandInfo[] {
  const d = dataOf(result, 'commands') ?? dataOf(result, 'help');
  return Array.isArray(d?.commands) ? (d.commands as CommandInfo[]) : [];
}

export function sessionItems(result: CommandResult): PickItem<string>[] {
  const d = dataOf(result, 'sessions');
  const sessions = Array.isArray(d?.sessions) ? (d.sessions as SessionInfo[]) : [];
  return sessions.map((s) => ({
    label: `${s.current ? '$(check) ' : ''}${s.title || '(untitled)'}`,
    description: `${s.updated || s.updatedAt} · ${s.messageCount} messages`,
    detail: s.id,
    value: s.id,
  }));
}

export function modelItems(result: CommandResult): PickItem<string>[] {
  const d = dataOf(result, 'model');
  const current = typeof d?.current === 'string' ? d.current : '';
  const models = Array.isArray(d?.models) ? (d.models as ModelInfo[]) : [];
  return models.map((m) => ({
    label: `${m.name === current ? '$(check) ' : ''}${m.name}`,
    description: m.provider,
    detail: m.description || undefined,
    value: m.name,
  }));
}

export function commandItems(catalog: readonly CommandInfo[]): PickItem<CommandInfo>[] {
  return [...catalog]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((c) => ({
      label: `/${c.name.replace(/^\//, '')}`,
      description: c.argumentHint || undefined,
      detail: c.description ? `${c.description} · ${c.kind}/${c.source}` : `${c.kind}/${c.source}`,
      value: c,
    }));
}
