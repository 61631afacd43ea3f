/** The extension's own commands (`coderLs.*`). The server's `coder.*` ids are
 * registered by vscode-languageclient from `executeCommandProvider`. */
import type { ImageAttachment } from './attachments';
import * as vscode from 'vscode';
import type { ChatViewProvider } from './chatView';
import { type Controller, progressTitle } from './controller';
import type { CommandResult } from './protocol';
import { plain } from './plainText';
import { commandItems, modelItems, presentResult, type PickItem, sessionItems } from './results';

export class Commands {
  constructor(
    private readonly controller: Controller,
    private readonly panel: ChatViewProvider,
  ) {}

  register(): vscode.Disposable[] {
    const reg = (id: string, fn: () => Promise<unknown>): vscode.Disposable =>
      vscode.commands.registerCommand(id, () => fn());
    return [
      reg('coderLs.ask', () => this.ask()),
      reg('coderLs.runCommand', () => this.runCommand()),
      reg('coderLs.shell', () => this.shell()),
      reg('coderLs.interrupt', () => this.interrupt()),
      reg('coderLs.newSession', () => this.send('coder.new', {})),
      reg('coderLs.resume', () => this.resume()),
      reg('coderLs.model', () => this.model()),
      reg('coderLs.showPanel', () => this.panel.reveal()),
    ];
  }

  /** Text typed in the panel (or the ask box): through `coder.input`. */
  async submit(text: string, context?: object, extras?: { images?: ImageAttachment[]; pastes?: string[] }): Promise<void> {
    const result = await this.controller.submit(text, context as Record<string, unknown> | undefined, extras);
    this.show(result);
  }

  /** Edit and resend a past user message: the new text (asked for, the old one to edit)
   * runs in a new session forked before it; the files go back as `/rewind --code`. */
  async resend(submissionId: string, text: string): Promise<void> {
    const edited = await vscode.window.showInputBox({
      value: text,
      prompt: 'Edit and resend: runs in a new session forked before this message (the original is kept; files go back as /rewind --code)',
    });
    if (edited === undefined || !edited.trim()) return;
    this.show(await this.controller.resend(edited.trim(), submissionId));
  }

  async interrupt(): Promise<void> {
    const result = await this.controller.interrupt();
    if (result.mode === 'error') void vscode.window.showErrorMessage(presentMessage(result));
  }

  async stopAgent(agentId: string): Promise<void> {
    const result = await this.controller.stopAgent(agentId);
    if (result.mode === 'error') void vscode.window.showErrorMessage(presentMessage(result));
  }

  async send(command: string, arg: Record<string, unknown>, echo?: string, progress?: string): Promise<CommandResult> {
    void this.panel.reveal();
    const result = await this.controller.run(command, arg, { echo, progress });
    this.show(result);
    return result;
  }

  /** Error → popup; the result also goes into the transcript (once). `applyToTranscript`:
   * the result of a command VS Code ran itself (a code lens, a code action, a `command:`
   * link): the chat shows it, and the focus stays in the editor the user acted in. */
  show(result: CommandResult, applyToTranscript = false): void {
    if (applyToTranscript) {
      this.controller.transcript.applyResult(result);
      void this.panel.reveal({ preserveFocus: true });
    }
    const p = presentResult(result);
    if (p.kind === 'error') void vscode.window.showErrorMessage(plain(p.message));
  }

  private async ask(): Promise<void> {
    const text = await vscode.window.showInputBox({ prompt: 'Ask Coder (/command, !shell or a request)', ignoreFocusOut: true });
    if (!text?.trim()) return;
    void this.panel.reveal();
    await this.submit(text.trim(), selectionContext());
  }

  private async runCommand(): Promise<void> {
    const catalog = this.controller.catalog.length ? this.controller.catalog : await this.controller.refreshCatalog();
    const pick = await vscode.window.showQuickPick(commandItems(catalog), { placeHolder: 'Coder: run a slash command', matchOnDetail: true });
    if (!pick) return;
    const name = pick.value.name.replace(/^\//, '');
    let args = '';
    if (pick.value.argumentHint) {
      const typed = await vscode.window.showInputBox({ prompt: `/${name} ${pick.value.argumentHint}`, placeHolder: pick.value.argumentHint });
      if (typed === undefined) return;
      args = typed.trim();
    }
    void this.panel.reveal();
    await this.submit(args ? `/${name} ${args}` : `/${name}`);
  }

  private async shell(): Promise<void> {
    const command = await vscode.window.showInputBox({ prompt: 'Run in the session shell', placeHolder: 'npm test' });
    if (!command?.trim()) return;
    await this.send('coder.shell', { command: command.trim() }, `!${command.trim()}`, progressTitle(`!${command.trim()}`));
  }

  private async resume(): Promise<void> {
    const list = await this.controller.run('coder.sessions', {}, { silent: true });
    if (list.mode === 'error') return void vscode.window.showErrorMessage(presentMessage(list));
    const id = await pickValue(sessionItems(list), 'Resume a session', 'No sessions yet');
    if (id) await this.send('coder.resume', { args: id }, `/resume ${id}`);
  }

  private async model(): Promise<void> {
    const info = await this.controller.run('coder.model', {}, { silent: true });
    if (info.mode === 'error') return void vscode.window.showErrorMessage(presentMessage(info));
    const name = await pickValue(modelItems(info), 'Switch the session model', 'The server listed no models');
    if (name) await this.send('coder.model', { args: name }, `/model ${name}`);
  }
}

/** A result's text for a notification: `plain`, it quotes the input and the server. */
function presentMessage(result: CommandResult): string {
  const p = presentResult(result);
  return plain(p.kind === 'error' ? p.message : p.summary);
}

async function pickValue<T>(items: PickItem<T>[], placeHolder: string, empty: string): Promise<T | undefined> {
  if (!items.length) {
    void vscode.window.showInformationMessage(empty);
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(items, { placeHolder, matchOnDescription: true, matchOnDetail: true });
  return pick?.value;
}

/** `{uri, range}` of the active editor's selection, for `coder.input` `context`. */
export function selectionContext(): Record<string, unknown> | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.selection.isEmpty) return undefined;
  const { start, end } = editor.selection;
  return {
    uri: editor.document.uri.toString(),
    range: { start: { line: start.line, character: start.character }, end: { line: end.line, character: end.character } },
  };
}
