/** Messages between the extension host and the chat webview. */
import type { ImageAttachment } from '../attachments';
import type { CommandInfo } from '../protocol';
import type { Snapshot } from '../transcript';

export type ToWebview =
  | { type: 'snapshot'; snapshot: Snapshot; busy: boolean }
  | { type: 'catalog'; commands: CommandInfo[] }
  | { type: 'focus' }
  /** The editor context the next input carries (null: none, or removed). */
  | { type: 'context'; label: string | null }
  /** The answer to a `complete` (coder.completeInput's items; `seq` names the request). */
  | { type: 'completions'; seq: number; start: number; items: { label: string; kind: string; detail?: string }[] };

export type FromWebview =
  | { type: 'ready' }
  | { type: 'submit'; text: string; images?: ImageAttachment[]; pastes?: string[] }
  | { type: 'dropContext' }
  | { type: 'complete'; text: string; position: number; seq: number }
  | { type: 'interrupt' }
  | { type: 'stopAgent'; agentId: string }
  | { type: 'openFile'; uri: string }
  | { type: 'newSession' };
