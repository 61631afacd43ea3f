/** Messages between the extension host and the chat webview. */
import type { CommandInfo } from '../protocol';
import type { Snapshot } from '../transcript';

export type ToWebview =
  | { type: 'snapshot'; snapshot: Snapshot; busy: boolean }
  | { type: 'catalog'; commands: CommandInfo[] }
  | { type: 'focus' };

export type FromWebview =
  | { type: 'ready' }
  | { type: 'submit'; text: string }
  | { type: 'interrupt' }
  | { type: 'stopAgent'; agentId: string }
  | { type: 'openFile'; uri: string }
  | { type: 'newSession' };
