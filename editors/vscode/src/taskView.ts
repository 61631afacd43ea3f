/** The Tasks view: the workspace's `/task`s with their steps, states, percentage,
 * tokens and ETA, fed by the controller's TaskBoard. */
import * as vscode from 'vscode';
import type { Controller } from './controller';
import { plain } from './plainText';
import { stepDescription, statusIcon, type TaskInfo, type TaskStep, taskDescription } from './tasks';

export const TASKS_VIEW_ID = 'coderLs.tasks';

type Node = { kind: 'task'; task: TaskInfo } | { kind: 'step'; task: TaskInfo; step: TaskStep };

/** Statuses a task can be resumed from (contract section 14: paused, or failed steps). */
const RESUMABLE = new Set(['paused', 'failed']);

export class TaskTreeProvider implements vscode.TreeDataProvider<Node> {
  private readonly emitter = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private loaded = false;
  /** The nodes this view gave out: a click in the view passes one; a `command:` link or
   * another extension can only pass an object that looks like one. */
  private readonly issued = new WeakSet<object>();

  constructor(private readonly controller: Controller) {
    controller.tasks.onDidChange(() => this.emitter.fire(undefined));
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'task') {
      const t = node.task;
      const label = t.goal ? (t.goal.length > 80 ? `${t.goal.slice(0, 79)}…` : t.goal) : t.id;
      // always expandable: VS Code keeps an item's first state (by id), and the steps of
      // a new task arrive after its first taskUpdated
      const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `task:${t.id}`;
      item.description = taskDescription(t);
      item.iconPath = new vscode.ThemeIcon(statusIcon(t.status));
      item.tooltip = new vscode.MarkdownString(
        [`**${escapeMd(t.goal || t.id)}**`, '', `\`${t.id}\` · ${taskDescription(t)}`, t.report ? `\n\nReport: \`${t.report}\`` : ''].join('\n'),
      );
      item.contextValue = [
        'coderTask',
        RESUMABLE.has(t.status) ? 'resumable' : '',
        t.status === 'running' ? 'running' : '',
        t.report ? 'report' : '',
      ]
        .filter(Boolean)
        .join('.');
      return item;
    }
    const s = node.step;
    const item = new vscode.TreeItem(s.title || s.id, vscode.TreeItemCollapsibleState.None);
    item.id = `task:${node.task.id}:${s.id}`;
    item.description = stepDescription(s);
    item.iconPath = new vscode.ThemeIcon(statusIcon(s.status));
    item.tooltip = `${s.id}: ${s.title}\n${stepDescription(s)}`;
    item.contextValue = 'coderTaskStep';
    return item;
  }

  getChildren(node?: Node): Node[] {
    if (!node) {
      if (!this.loaded) {
        this.loaded = true;
        void this.controller.refreshTasks().catch(() => undefined);
      }
      return this.give(this.controller.tasks.list().map((task) => ({ kind: 'task', task })));
    }
    if (node.kind === 'task') return this.give(node.task.steps.map((step) => ({ kind: 'step', task: node.task, step })));
    return [];
  }

  private give(nodes: Node[]): Node[] {
    for (const n of nodes) this.issued.add(n);
    return nodes;
  }

  /** `node` came from this view (not made up by a link or another extension). */
  isOwn(node: unknown): node is Node {
    return typeof node === 'object' && node !== null && this.issued.has(node);
  }

  refresh(): Promise<void> {
    return this.controller.refreshTasks();
  }
}

/** The task a command was invoked on: the view's item, else the newest one `want`s (an
 * argument that did not come from the view names nothing). */
export function taskArg(
  controller: Controller,
  tree: TaskTreeProvider,
  node: unknown,
  want: (t: TaskInfo) => boolean,
): TaskInfo | undefined {
  if (tree.isOwn(node)) return node.task;
  return controller.tasks.list().find(want);
}

function escapeMd(text: string): string {
  return text.replace(/[\\`*_[\]<>]/g, (c) => `\\${c}`);
}

/** What the task commands need from the rest of the extension. */
export interface TaskActions {
  submit(text: string): Promise<void>;
  interrupt(): Promise<void>;
  openFile(path: string): Promise<void>;
}

export function registerTaskCommands(controller: Controller, tree: TaskTreeProvider, actions: TaskActions): vscode.Disposable[] {
  const resumable = (t: TaskInfo): boolean => RESUMABLE.has(t.status);
  return [
    vscode.commands.registerCommand('coderLs.task.start', async () => {
      const goal = await vscode.window.showInputBox({
        prompt: 'Coder: start a task (planned, then run by subagents; resumable)',
        placeHolder: 'Add type hints to every module of src/',
        ignoreFocusOut: true,
      });
      if (goal?.trim()) await actions.submit(`/task ${goal.trim()}`);
    }),
    vscode.commands.registerCommand('coderLs.task.resume', async (node?: unknown) => {
      const t = taskArg(controller, tree, node, resumable);
      if (!t) return void vscode.window.showInformationMessage('No paused or failed task to resume.');
      // The view's own button is the user's click. Anything else (the palette, a `command:`
      // link in a README, another extension) is asked first: resuming runs the task's
      // subagents, and the server sees this submission as typed.
      if (!tree.isOwn(node)) {
        const goal = plain(t.goal || t.id);
        const asked = await vscode.window.showWarningMessage(
          `Resume the task "${goal}"? Its subagents run commands and edit files, each asking as your permissions say.`,
          { modal: true },
          'Resume',
        );
        if (asked !== 'Resume') return;
      }
      await actions.submit(`/task resume ${t.id}`);
    }),
    vscode.commands.registerCommand('coderLs.task.stop', () => actions.interrupt()),
    vscode.commands.registerCommand('coderLs.task.refresh', () => tree.refresh()),
    vscode.commands.registerCommand('coderLs.task.openReport', async (node?: unknown) => {
      const t = taskArg(controller, tree, node, (x) => !!x.report);
      if (!t?.report) return void vscode.window.showInformationMessage('This task has no report yet.');
      await actions.openFile(t.report);
    }),
  ];
}
