/** A scripted Transport: records requests and answers from a handler. */
import type { Transport } from '../../src/controller';
import type { CommandResult } from '../../src/protocol';

export interface Sent {
  command: string;
  arg: Record<string, unknown>;
}

export function result(partial: Partial<CommandResult> = {}): CommandResult {
  return {
    sessionId: 's1',
    submissionId: 'sub1',
    mode: 'command',
    status: 'completed',
    reply: '',
    command: null,
    rawOutput: null,
    exitCode: null,
    data: null,
    error: null,
    ...partial,
  };
}

export class FakeTransport implements Transport {
  readonly sent: Sent[] = [];
  /** The progress callback of the last request that had one. */
  onProgress: ((message: string) => void) | undefined;
  constructor(private readonly handler: (command: string, arg: Record<string, unknown>) => unknown = () => result()) {}

  async executeCommand(command: string, arg: Record<string, unknown>, onProgress?: (message: string) => void): Promise<unknown> {
    this.sent.push({ command, arg });
    if (onProgress) this.onProgress = onProgress;
    return this.handler(command, arg);
  }
}
