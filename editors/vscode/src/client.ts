/** Starting `coder-ls` over stdio with vscode-languageclient. */
import * as vscode from 'vscode';
import {
  type ConfigurationParams,
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  TransportKind,
} from 'vscode-languageclient/node';
import { didChangeParams } from './config';
import type { Transport } from './controller';
import { EVENT_METHOD } from './protocol';
import { coderConfig, serverConfig, serverLaunch } from './settings';

/**
 * @param onResult sees the result of the server commands VS Code runs itself
 * (the auto-registered `coder.*` ids: code actions, the command palette).
 */
export function createClient(output: vscode.OutputChannel, onResult: (result: unknown) => void): LanguageClient {
  const launch = serverLaunch();
  const serverOptions: ServerOptions = {
    command: launch.command,
    args: launch.args,
    transport: TransportKind.stdio,
    options: { cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
    outputChannel: output,
    initializationOptions: serverConfig(),
    middleware: {
      executeCommand: async (command, args, next) => {
        const result: unknown = await next(command, args);
        onResult(result);
        return result;
      },
      workspace: {
        // ClientHost pushes `{settings: {coder: ...}}` itself (mapped, user-set keys
        // only); the library's own push would send `settings: null` or raw sections.
        didChangeConfiguration: async () => undefined,
        // Answer pulls of the `coder` section with the same mapping as the pushes.
        configuration: async (params: ConfigurationParams, token, next) => {
          const answers = await next(params, token);
          if (!Array.isArray(answers)) return answers;
          return params.items.map((item, i) => (item.section === 'coder' ? serverConfig() : answers[i]));
        },
      },
    },
  };
  return new LanguageClient('coderLs', 'Coder (coder-ls)', serverOptions, clientOptions);
}

/** Holds the running client; restarts it when `coder.server.*` changes. */
export class ClientHost implements Transport, vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient> | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly output: vscode.OutputChannel,
    private readonly onEvent: (event: unknown) => void,
    private readonly onResult: (result: unknown) => void = () => undefined,
  ) {
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('coder.server')) void this.restart();
        else if (e.affectsConfiguration('coder')) void this.pushConfig();
      }),
    );
  }

  get running(): boolean {
    return this.client?.isRunning() ?? false;
  }

  start(): Promise<LanguageClient> {
    this.starting ??= (async () => {
      const client = createClient(this.output, this.onResult);
      client.onNotification(EVENT_METHOD, (event: unknown) => this.onEvent(event));
      this.client = client;
      try {
        await client.start();
      } catch (err) {
        this.starting = undefined;
        this.client = undefined;
        const msg = err instanceof Error ? err.message : String(err);
        void vscode.window
          .showErrorMessage(`coder-ls failed to start: ${msg}. Check the "coder.server.path" setting.`, 'Open Settings')
          .then((pick) => pick && vscode.commands.executeCommand('workbench.action.openSettings', 'coder.server'));
        throw err;
      }
      return client;
    })();
    return this.starting;
  }

  async restart(): Promise<void> {
    const old = this.client;
    this.client = undefined;
    this.starting = undefined;
    if (old) await old.stop().catch(() => undefined);
    await this.start().catch(() => undefined);
  }

  async executeCommand(command: string, arg: Record<string, unknown>): Promise<unknown> {
    const client = await this.start();
    return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [arg] });
  }

  private async pushConfig(): Promise<void> {
    if (!this.client?.isRunning()) return;
    await this.client.sendNotification(DidChangeConfigurationNotification.type, didChangeParams(coderConfig()));
  }

  async dispose(): Promise<void> {
    for (const d of this.disposables) d.dispose();
    await this.client?.stop().catch(() => undefined);
  }
}
