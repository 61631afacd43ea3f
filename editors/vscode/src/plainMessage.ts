/**
 * The server's `window/showMessage` and `window/showMessageRequest` as notifications whose
 * message is `plain` (src/plainText.ts): the language client's own handlers pass the
 * message as it is, and VS Code would render the links in it (the approval of a bash
 * command the model chose is such a request).
 */
import * as vscode from 'vscode';
import { type BaseLanguageClient, MessageType, ShowMessageNotification, ShowMessageRequest } from 'vscode-languageclient/node';
import { plain } from './plainText';
import { isServerMismatchMessage } from './version';

function showFor(type: MessageType): typeof vscode.window.showInformationMessage {
  switch (type) {
    case MessageType.Error:
      return vscode.window.showErrorMessage;
    case MessageType.Warning:
      return vscode.window.showWarningMessage;
    default:
      return vscode.window.showInformationMessage;
  }
}

/** Call before `client.start()`: handlers registered then are installed once the server
 * answered `initialize`, after (and over) the client's own; a restart keeps them. */
export function plainServerMessages(client: BaseLanguageClient): void {
  client.onNotification(ShowMessageNotification.type, (p) => {
    // the extension says a protocol mismatch itself, with its buttons (src/version.ts)
    if (!isServerMismatchMessage(p.message)) void showFor(p.type)(plain(p.message));
  });
  client.onRequest(ShowMessageRequest.type, async (p) => (await showFor(p.type)(plain(p.message), ...(p.actions ?? []))) ?? null);
}
