/**
 * A minimal stand-in for the `vscode` module, installed into Node's module loader
 * so extension modules can be unit-tested without VS Code. Import it FIRST.
 */
import Module = require('module');

type Level = 'globalValue' | 'workspaceValue' | 'workspaceFolderValue';

export interface Call {
  fn: string;
  args: unknown[];
}

export const calls: Call[] = [];
/** Ids passed to `commands.registerCommand`. */
export const registeredCommands: string[] = [];
/** The handlers of registered commands, to run them as the command palette would. */
export const commandHandlers = new Map<string, (...args: unknown[]) => unknown>();
/** Settings by full key (`coder.shell.timeoutSeconds`) and level. */
export const settings = new Map<string, Partial<Record<Level, unknown>>>();
/** Scripted answers for quick picks / input boxes, consumed in order. */
export const answers: {
  quickPick: Array<(items: unknown[]) => unknown>;
  inputBox: Array<string | undefined>;
  warning: Array<string | undefined>;
} = {
  quickPick: [],
  inputBox: [],
  warning: [],
};

/** Installed extensions by id, for `extensions.getExtension` (e.g. a stand-in ms-python.python). */
export const extensions = new Map<string, unknown>();

/** Contributed defaults by full key (what `get` falls back to, like VS Code). */
export const defaults = new Map<string, unknown>();

/** What `workspace.textDocuments` returns (the open documents). */
export const textDocuments: unknown[] = [];

/** The progress notifications shown with `window.withProgress`. */
export interface ShownProgress {
  options: { location: number; title?: string; cancellable?: boolean };
  messages: string[];
  /** Presses the notification's Cancel button. */
  cancel(): void;
  done: boolean;
}
export const progresses: ShownProgress[] = [];

/** A quick pick made with createQuickPick: its state, and the user's moves. */
export class MockQuickPick {
  title = '';
  placeholder = '';
  canSelectMany = false;
  ignoreFocusOut = false;
  matchOnDescription = false;
  matchOnDetail = false;
  items: unknown[] = [];
  selectedItems: unknown[] = [];
  visible = false;
  disposed = false;
  private readonly on: Record<string, Array<(v?: unknown) => void>> = { selection: [], accept: [], hide: [] };
  onDidChangeSelection = (l: (v?: unknown) => void) => (this.on.selection.push(l), { dispose() {} });
  onDidAccept = (l: () => void) => (this.on.accept.push(l), { dispose() {} });
  onDidHide = (l: () => void) => (this.on.hide.push(l), { dispose() {} });
  show(): void {
    this.visible = true;
  }
  hide(): void {
    this.visible = false;
    for (const l of this.on.hide) l();
  }
  dispose(): void {
    this.disposed = true;
  }
  /** The user ticks exactly `picked`. */
  select(picked: unknown[]): void {
    this.selectedItems = picked;
    for (const l of this.on.selection) l(picked);
  }
  accept(): void {
    for (const l of this.on.accept) l();
  }
}
export const quickPicks: MockQuickPick[] = [];

export function reset(): void {
  calls.length = 0;
  progresses.length = 0;
  quickPicks.length = 0;
  textDocuments.length = 0;
  registeredCommands.length = 0;
  commandHandlers.clear();
  settings.clear();
  extensions.clear();
  answers.quickPick.length = 0;
  answers.inputBox.length = 0;
  answers.warning.length = 0;
}

export function setSetting(key: string, value: unknown, level: Level = 'globalValue'): void {
  settings.set(key, { ...settings.get(key), [level]: value });
}

const record =
  (fn: string, result?: (...args: unknown[]) => unknown) =>
  (...args: unknown[]): unknown => {
    calls.push({ fn, args });
    return Promise.resolve(result ? result(...args) : undefined);
  };

export const vscode = {
  window: {
    showErrorMessage: record('showErrorMessage'),
    showInformationMessage: record('showInformationMessage'),
    showWarningMessage: record('showWarningMessage', () => answers.warning.shift()),
    showQuickPick: record('showQuickPick', (items) => answers.quickPick.shift()?.(items as unknown[])),
    showInputBox: record('showInputBox', () => answers.inputBox.shift()),
    showTextDocument: record('showTextDocument'),
    activeTextEditor: undefined,
    visibleTextEditors: [] as unknown[],
    onDidChangeActiveTextEditor: () => ({ dispose() {} }),
    onDidChangeTextEditorSelection: () => ({ dispose() {} }),
    createQuickPick: () => {
      const q = new MockQuickPick();
      quickPicks.push(q);
      return q;
    },
    createStatusBarItem: () => ({ text: '', tooltip: '', command: '', show() {}, dispose() {} }),
    withProgress: async <T>(
      options: ShownProgress['options'],
      task: (
        progress: { report(value: { message?: string }): void },
        token: { isCancellationRequested: boolean; onCancellationRequested(fn: () => void): { dispose(): void } },
      ) => Promise<T>,
    ): Promise<T> => {
      const listeners: Array<() => void> = [];
      const token = {
        isCancellationRequested: false,
        onCancellationRequested: (fn: () => void) => (listeners.push(fn), { dispose() {} }),
      };
      const shown: ShownProgress = {
        options,
        messages: [],
        done: false,
        cancel: () => {
          token.isCancellationRequested = true;
          for (const l of listeners) l();
        },
      };
      progresses.push(shown);
      try {
        return await task({ report: (v) => v.message !== undefined && shown.messages.push(v.message) }, token);
      } finally {
        shown.done = true;
      }
    },
  },
  ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
  /** No other extension is installed (the Python extension included) unless a test adds one. */
  extensions: { getExtension: (id: string): unknown => extensions.get(id) },
  env: { openExternal: record('openExternal', () => true), clipboard: { writeText: record('clipboard.writeText') } },
  workspace: {
    registerTextDocumentContentProvider: () => ({ dispose() {} }),
    workspaceFolders: undefined,
    textDocuments,
    getConfiguration(section: string) {
      const full = (key: string): string => `${section}.${key}`;
      return {
        inspect: <T>(key: string) =>
          ({ key: full(key), ...settings.get(full(key)) }) as { key: string } & Partial<Record<Level, T>>,
        get: <T>(key: string): T | undefined => {
          const s = settings.get(full(key));
          return (s?.workspaceFolderValue ?? s?.workspaceValue ?? s?.globalValue ?? defaults.get(full(key))) as T | undefined;
        },
      };
    },
  },
  commands: { executeCommand: record('executeCommand'), registerCommand: (id: string, fn: (...args: unknown[]) => unknown) => (
      registeredCommands.push(id), commandHandlers.set(id, fn), { dispose() {} }
    ),
  },
  languages: { registerCodeLensProvider: () => ({ dispose() {} }) },
  Range: class {
    constructor(
      public startLine: number,
      public startCharacter: number,
      public endLine: number,
      public endCharacter: number,
    ) {}
  },
  CodeLens: class {
    constructor(
      public range: { startLine: number },
      public command?: { title: string; command: string; arguments?: unknown[] },
    ) {}
  },
  EventEmitter: class<T> {
    private readonly listeners: Array<(v: T) => void> = [];
    readonly event = (l: (v: T) => void): { dispose(): void } => (this.listeners.push(l), { dispose() {} });
    fire(v: T): void {
      for (const l of this.listeners) l(v);
    }
    dispose(): void {}
  },
  TreeItem: class {
    id?: string;
    description?: string;
    tooltip?: unknown;
    iconPath?: unknown;
    contextValue?: string;
    constructor(
      public label: string,
      public collapsibleState: number,
    ) {}
  },
  TreeItemCollapsibleState: { None: 0, Collapsed: 1, Expanded: 2 },
  ThemeIcon: class {
    constructor(public id: string) {}
  },
  MarkdownString: class {
    constructor(public value: string) {}
  },
  StatusBarAlignment: { Left: 1, Right: 2 },
  Uri: {
    parse: (s: string) => ({ scheme: s.split(':')[0], path: s.slice(s.indexOf(':') + 1).replace(/^\/\/[^/]*/, ''), toString: () => s }),
    file: (p: string) => ({ scheme: 'file', fsPath: p, toString: () => `file://${p}` }),
    joinPath: (base: { path?: string; fsPath?: string }, ...parts: string[]) => ({ path: [base.path ?? base.fsPath, ...parts].join('/') }),
  },
};

const loader = Module as unknown as { _load(request: string, parent: unknown, isMain: boolean): unknown };
const original = loader._load;
loader._load = function (request: string, parent: unknown, isMain: boolean): unknown {
  if (request === 'vscode') return vscode;
  return original.call(this, request, parent, isMain);
};
