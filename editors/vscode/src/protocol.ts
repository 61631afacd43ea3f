/**
 * Wire types of the coder-ls contract (docs: shared/spec/lsp-contract.md,
 * Python source of truth: coder_ls/protocol/{events,results,args}.py).
 * Pure types: no `vscode` import, usable from tests and the webview.
 */

export type Mode = 'nl' | 'raw' | 'command' | 'error';
export type Status = 'completed' | 'cancelled' | 'failed';

export interface CommandInfo {
  name: string;
  description: string;
  argumentHint: string;
  kind: 'local' | 'prompt' | 'agent';
  source: 'builtin' | 'workspace' | 'user' | 'skill' | 'bundled' | 'managed' | 'plugin' | 'mcp';
  /** false: a skill for the agent only (`/name` answers with an error) */
  userInvocable?: boolean;
  /** The command model (contract section 18); absent = the default. */
  aliases?: string[];
  hidden?: boolean;
  available?: boolean;
  reason?: string;
  immediate?: boolean;
}

export interface SessionInfo {
  id: string;
  title: string;
  updatedAt: string;
  updated: string;
  messageCount: number;
  current?: boolean;
}

export interface ModelInfo {
  name: string;
  provider: string;
  description?: string;
}

/** The `data` payloads, tagged by `kind`. Unknown kinds are allowed. */
export type ResultData =
  | { kind: 'commands'; commands: CommandInfo[] }
  | { kind: 'help'; commands: CommandInfo[] }
  | { kind: 'sessions'; sessions: SessionInfo[]; timezone: string }
  | { kind: 'resumed'; session: SessionInfo; messageCount: number }
  | { kind: 'model'; current: string; provider: string; models: ModelInfo[] }
  | { kind: 'permissions'; preset: string; presets: string[]; rules: unknown[] }
  | { kind: 'diff'; stat: string; diff: string; files: string[]; submission?: number | null; changes?: { path: string; before: string | null; after: string | null }[] | null }
  | { kind: 'undo'; restored: string[]; removed: string[]; submissionId?: string | null }
  | { kind: 'session'; session: SessionInfo; previousSessionId?: string | null }
  | { kind: 'interrupt'; cancelledSubmissions: string[] }
  | { kind: 'usage'; inputTokens: number; outputTokens: number; steps: number };

export interface CommandResult {
  sessionId: string;
  submissionId: string;
  mode: Mode;
  status: Status;
  reply: string;
  command?: string | null;
  rawOutput?: string | null;
  exitCode?: number | null;
  data?: ResultData | { kind: string } | null;
  error?: { code: string; message: string } | null;
}

export interface TodoItem {
  content: string;
  status: 'pending' | 'in_progress' | 'completed';
  id?: string;
}

interface EventBase {
  sessionId: string;
  submissionId: string;
  seq: number;
}

/** Every `coder/event` type this client understands. */
export type KnownEvent = EventBase &
  (
    | { type: 'userMessage'; text: string }
    | { type: 'assistantDelta'; text: string }
    | { type: 'reasoningDelta'; text: string }
    | { type: 'assistantRestart'; reason: string }
    | { type: 'assistantMessage'; text: string }
    | { type: 'toolCallBegin'; callId: string; tool: string; input: Record<string, unknown> }
    | { type: 'toolCallEnd'; callId: string; output: string; isError?: boolean }
    | { type: 'shellOutput'; chunk: string }
    | { type: 'shellFinished'; command: string; exitCode: number | null; truncated?: boolean; timedOut?: boolean }
    | { type: 'editApplied'; uri: string; applied: boolean; reason?: string | null; onDisk?: boolean }
    | { type: 'approvalRequested'; callId: string; tool: string; summary: string }
    | { type: 'approvalResolved'; callId: string; decision: string }
    | { type: 'todoUpdated'; todos: TodoItem[] }
    | { type: 'contextUsage'; usedTokens: number; limitTokens: number; agentId?: string | null } // agentId: a subagent's
    | { type: 'sessionChanged'; reason: 'new' | 'clear' | 'resume' | 'fork'; previousSessionId?: string | null }
    | { type: 'modelChanged'; model: string; provider: string }
    | { type: 'permissionsChanged'; preset: string }
    | { type: 'commandsChanged' }
    | { type: 'turnFinished'; status: Status }
    | { type: 'error'; message: string }
    | { type: 'notice'; message: string }
    | { type: 'hookRan'; event: string; name: string; decision: string; ms: number }
    /** Plan mode (contract section 22): answered with `coder.plan {submissionId, action}`. */
    | { type: 'planProposed'; plan: string }
  );

/** What arrives on the wire: a known event or something newer we ignore. */
export type CoderEvent = KnownEvent | (EventBase & { type: string; [key: string]: unknown });

export const EVENT_METHOD = 'coder/event';

export function isCommandResult(value: unknown): value is CommandResult {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.mode === 'string' && typeof v.status === 'string';
}
