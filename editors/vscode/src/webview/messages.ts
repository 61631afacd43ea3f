/** Messages between the extension host and the chat webview. */
import type { ImageAttachment } from '../attachments';
import type { CommandInfo } from '../protocol';
import type { Snapshot } from '../transcript';

/** An edit review waiting for the user (src/review.ts), as the chat shows it. */
export interface ReviewView {
  id: string;
  label: string;
  /** The files, relative to the workspace. */
  files: string[];
  accepted: number;
  total: number;
}

export type ToWebview =
  /** `progress`: what the running request does now (the server's progress message). */
  | { type: 'snapshot'; snapshot: Snapshot; busy: boolean; progress?: string }
  /** The edit reviews waiting for the user: the chat shows them above the input. */
  | { type: 'reviews'; reviews: ReviewView[] }
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
  /** A code block's Copy or Insert (at the cursor of the editor). */
  | { type: 'code'; action: 'copy' | 'insert'; text: string }
  /** A waiting review's buttons: show its changes again, apply the ticked ones, reject all. */
  | { type: 'review'; id: string; action: 'show' | 'apply' | 'reject' }
  | { type: 'newSession' }
  /** A plan's buttons (plan mode): approve in `mode`, revise with `feedback` (the input box), reject. */
  | { type: 'plan'; submissionId: string; action: 'approve' | 'revise' | 'reject'; feedback?: string; mode?: string }
  /** "Edit and resend" on a past user message: its submission and text. */
  | { type: 'resend'; submissionId: string; text: string };
