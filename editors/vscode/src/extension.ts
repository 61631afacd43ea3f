/** Entry point: the language client, the chat panel, the status bar, the commands. */
import * as vscode from 'vscode';
import { ChatViewProvider, openUri, VIEW_ID } from './chatView';
import { ClientHost } from './client';
import { Commands } from './commands';
import { Controller } from './controller';
import { saveEditedFile } from './documents';
import { isCommandResult } from './protocol';
import { ProgressCenter } from './runProgress';
import { EditReviews } from './review';
import { StatusBar } from './statusBar';
import { TurnDiffs } from './diffView';
import { registerTaskCommands, TASKS_VIEW_ID, TaskTreeProvider } from './taskView';

let host: ClientHost | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('Coder (coder-ls)');
  let controller: Controller | undefined;
  let commands: Commands | undefined;
  host = new ClientHost(
    output,
    (event) => {
      controller?.handleEvent(event);
      void saveEditedFile(event, (message) => output.appendLine(message));
    },
    (result) => void (isCommandResult(result) && commands?.show(result, true)),
  );
  const reviews = new EditReviews();
  host.reviews = reviews;
  host.own = { extensionPath: context.extensionPath, storage: context.globalStorageUri.fsPath };
  controller = new Controller(host);
  const ctl = controller;
  let panel: ChatViewProvider | undefined;
  // one Cancel notification for whatever runs, and none while the chat shows the run
  const center = new ProgressCenter({
    interrupt: () => ctl.interrupt(),
    waitingForApproval: () => ctl.waitingForApproval,
    onDidChange: (listener: () => void) => ctl.subscribe(listener),
    chatVisible: () => panel?.visible ?? false,
  });
  ctl.progressUi = (title, work) => center.run(title, work);
  host.runLong = (title, work) => center.run(title, () => ctl.during(work));

  panel = new ChatViewProvider(context.extensionUri, ctl, {
    submit: (text, extras) => commands!.submit(text, extras?.context, extras),
    interrupt: () => commands!.interrupt(),
    stopAgent: (agentId) => commands!.stopAgent(agentId),
    newSession: async () => void (await commands!.send('coder.new', {}, '/new')),
    resend: (submissionId, text) => commands!.resend(submissionId, text),
  }, reviews);
  const chat = panel;
  chat.onDidChangeVisibility(() => center.visibilityChanged());
  // the diff of each edit the extension applies goes into the transcript with its editApplied
  host.onEditDiff = (uri, diff) => ctl.transcript.noteEditDiff(uri, diff);
  commands = new Commands(ctl, chat);
  const cmds = commands;
  const tasks = new TaskTreeProvider(ctl);
  const turnDiffs = new TurnDiffs();
  ctl.resultListeners.push((result) => void turnDiffs.show(result));

  context.subscriptions.push(
    output,
    host,
    new StatusBar(ctl),
    turnDiffs.register(),
    vscode.window.registerWebviewViewProvider(VIEW_ID, chat, { webviewOptions: { retainContextWhenHidden: true } }),
    ...commands.register(),
    ...reviews.register(),
    vscode.window.createTreeView(TASKS_VIEW_ID, { treeDataProvider: tasks, showCollapseAll: true }),
    ...registerTaskCommands(ctl, tasks, {
      submit: async (text) => {
        void chat.reveal();
        await cmds.submit(text);
      },
      interrupt: () => cmds.interrupt(),
      openFile: (path) => openUri(path),
    }),
    { dispose: () => ctl.dispose() },
  );

  try {
    await host.start();
    void ctl.refreshCatalog().catch(() => undefined);
    void ctl.refreshModel().catch(() => undefined);
  } catch {
    // ClientHost already told the user; commands retry the start.
  }
}

export async function deactivate(): Promise<void> {
  await host?.dispose();
  host = undefined;
}
