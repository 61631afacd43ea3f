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
  WorkDoneProgress,
} from 'vscode-languageclient/node';
import { type DiffSink, handleApplyEdit } from './applyEdit';
import { ASK_USER_METHOD, type AskParams, askUser } from './askUser';
import { DIAGNOSTICS_METHOD, diagnostics, type EyesApi, LANGUAGE_QUERY_METHOD, languageQuery } from './eyes';
import type { EditReviews } from './review';
import { VIEW_ID as CHAT_VIEW_ID } from './chatView';
import { isSetupError, openInstallDocs, serverCommand, ServerNotFound } from './bundledServer';
import { didChangeParams, SERVER_PATH_KEY } from './config';
import type { Transport } from './controller';
import { FOCUS_COMMAND, followFocus, NOTIFY_METHOD, type NotifyParams, showNotify } from './focus';
import { EVENT_METHOD } from './protocol';
import { coderConfig, serverConfig, serverLaunch } from './settings';
import { markUntyped } from './origin';
import { plainServerMessages } from './plainMessage';
import { plain } from './plainText';
import { checkVersions, PROTOCOL_VERSION, serverProtocol } from './version';

/** VS Code's language features, as src/eyes.ts answers the server's questions from them. */
const eyesApi: EyesApi = {
  getDiagnostics: () => vscode.languages.getDiagnostics(),
  execute: (command, ...args) => vscode.commands.executeCommand(command, ...args),
  uri: (text) => vscode.Uri.parse(text),
  position: (line, character) => new vscode.Position(line, character),
};

/** Server commands VS Code itself runs (code actions) that start a submission. */
const LONG_COMMANDS = new Set(['coder.input', 'coder.shell', 'coder.codeAction']);

/** How a long command VS Code runs itself is shown while it runs (the chat's state and,
 * when the chat is hidden, the Cancel notification: src/runProgress.ts). */
export type RunLong = <T>(title: string, work: () => Promise<T>) => Promise<T>;

/**
 * @param onResult sees the result of the server commands VS Code runs itself
 * (the auto-registered `coder.*` ids: code actions, the command palette).
 */
export function createClient(
  output: vscode.OutputChannel,
  onResult: (result: unknown) => void,
  runLong: RunLong | undefined,
  command: string,
): LanguageClient {
  const launch = serverLaunch();
  output.appendLine(`coder-ls: starting ${command} ${launch.args.join(' ')}`.trimEnd());
  const serverOptions: ServerOptions = {
    command,
    args: launch.args,
    transport: TransportKind.stdio,
    options: { cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
    outputChannel: output,
    // `capabilities.askUser`: we answer coder/askUser ourselves (src/askUser.ts);
    // `capabilities.notify`: we show coder/notify ourselves (src/focus.ts);
    // `capabilities.diagnostics`, `.languageQuery`: we answer both from VS Code's language features (src/eyes.ts);
    // `protocolVersion`: the contract we speak (src/version.ts)
    initializationOptions: {
      ...serverConfig(),
      capabilities: { askUser: true, notify: true, diagnostics: true, languageQuery: true },
      protocolVersion: PROTOCOL_VERSION,
    },
    middleware: {
      executeCommand: async (command, args, next) => {
        // VS Code runs these itself (code actions, the palette, `command:` URIs): what
        // comes with arguments from elsewhere is not the user's typing (origin.ts).
        const marked = markUntyped(command, args);
        const run = async (): Promise<unknown> => (await next(command, marked)) as unknown;
        const result: unknown =
          runLong && LONG_COMMANDS.has(command) ? await runLong('Coder', run) : await run();
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

/** The extension's message when the server speaks another MAJOR of the contract. */
export function checkServerVersion(client: LanguageClient, command: string, output: vscode.OutputChannel): void {
  const result = client.initializeResult;
  const server = serverProtocol(result);
  output.appendLine(`coder-ls: ${result?.serverInfo?.name ?? 'server'} ${result?.serverInfo?.version ?? '?'}, protocol ${server} (extension: ${PROTOCOL_VERSION})`);
  const mismatch = checkVersions(server, command, result?.serverInfo?.version);
  if (!mismatch) return;
  output.appendLine(mismatch.message);
  void vscode.window.showWarningMessage(plain(mismatch.message), 'Open Settings', 'Open Docs').then((pick) => {
    if (pick === 'Open Settings') void openServerPathSetting();
    else if (pick === 'Open Docs') void openInstallDocs();
  });
}

/** Holds the running client; restarts it when `coder.server.*` changes. */
export class ClientHost implements Transport, vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient> | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private tokens = 0;
  private focus: vscode.Disposable | undefined;
  /** The extension's own review of edits sent as questions (src/review.ts). */
  reviews: EditReviews | undefined;
  /** Where the diff of each edit the extension applies goes (the transcript). */
  onEditDiff: DiffSink | undefined;
  /** Where the extension's own environment comes from and goes (src/bundledServer.ts). */
  own: { extensionPath: string; storage: string } | undefined;

  constructor(
    private readonly output: vscode.OutputChannel,
    private readonly onEvent: (event: unknown) => void,
    private readonly onResult: (result: unknown) => void = () => undefined,
    /** How the commands VS Code runs itself (code actions) are shown while they run. */
    public runLong?: RunLong,
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
      let client: LanguageClient;
      try {
        const { command } = await serverCommand(this.output, this.own);
        client = createClient(this.output, this.onResult, this.runLong, command);
        client.onNotification(EVENT_METHOD, (event: unknown) => this.onEvent(event));
        handleApplyEdit(client, (message) => this.output.appendLine(message), this.reviews, (uri, diff) => this.onEditDiff?.(uri, diff));
        client.onRequest(ASK_USER_METHOD, (params: AskParams, token) => askUser(params, vscode.window, token));
        client.onRequest(DIAGNOSTICS_METHOD, (params) => diagnostics(eyesApi, params));
        client.onRequest(LANGUAGE_QUERY_METHOD, (params) => languageQuery(eyesApi, params));
        plainServerMessages(client); // no link in a server message is live (src/plainText.ts)
        client.onNotification(NOTIFY_METHOD, (params: NotifyParams) =>
          showNotify(params, vscode.window, () => vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`)),
        );
        this.client = client;
        await client.start();
        // the window's focus, now and on each change: unfocused, the server notifies (src/focus.ts)
        this.focus?.dispose();
        this.focus = followFocus(
          vscode.window,
          (focused) => client.sendRequest(ExecuteCommandRequest.type, { command: FOCUS_COMMAND, arguments: [{ focused }] }),
          (message) => this.output.appendLine(message),
        );
        checkServerVersion(client, command, this.output);
      } catch (err) {
        this.starting = undefined;
        this.client = undefined;
        const msg = err instanceof Error ? err.message : String(err);
        this.output.appendLine(`coder-ls failed to start: ${msg}`);
        if (isSetupError(err)) {
          // what is missing (no suitable Python, a failed step) and where the docs say how
          void vscode.window.showErrorMessage(plain(msg), 'Open Docs', 'Open Settings').then((pick) => {
            if (pick === 'Open Docs') void openInstallDocs();
            else if (pick === 'Open Settings') void openServerPathSetting();
          });
          throw err;
        }
        const text = err instanceof ServerNotFound ? msg : `coder-ls failed to start: ${msg}. Check the "${SERVER_PATH_KEY}" setting.`;
        void vscode.window.showErrorMessage(plain(text), 'Open Settings').then((pick) => pick && openServerPathSetting());
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

  async executeCommand(command: string, arg: Record<string, unknown>, onProgress?: (message: string) => void): Promise<unknown> {
    const client = await this.start();
    if (!onProgress) return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [arg] });
    // Our own token: the server reports on it (no status-bar spinner from the
    // language client), and its messages go to our Cancel notification.
    const token = `coder.vscode/${++this.tokens}`;
    const sub = client.onProgress(WorkDoneProgress.type, token, (value) => {
      if (value.kind !== 'end' && value.message) onProgress(value.message);
      else if (value.kind === 'begin' && value.title) onProgress(value.title);
    });
    try {
      return await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [arg], workDoneToken: token });
    } finally {
      sub.dispose();
    }
  }

  private async pushConfig(): Promise<void> {
    if (!this.client?.isRunning()) return;
    await this.client.sendNotification(DidChangeConfigurationNotification.type, didChangeParams(coderConfig()));
  }

  async dispose(): Promise<void> {
    for (const d of this.disposables) d.dispose();
    this.focus?.dispose();
    await this.client?.stop().catch(() => undefined);
  }
}

/** The Settings editor on `coder.server.path` itself (the exact key: a section
 * prefix found nothing in the Remote-only listing of code-server). */
export function openServerPathSetting(): Thenable<unknown> {
  return vscode.commands.executeCommand('workbench.action.openSettings', SERVER_PATH_KEY);
}
