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
/** Settings by full key (`coder.shell.timeoutSeconds`) and level. */
export const settings = new Map<string, Partial<Record<Level, unknown>>>();
/** Scripted answers for quick picks / input boxes, consumed in order. */
export const answers: { quickPick: Array<(items: unknown[]) => unknown>; inputBox: Array<string | undefined> } = {
  quickPick: [],
  inputBox: [],
};

/** What `workspace.textDocuments` returns (the open documents). */
export const textDocuments: unknown[] = [];

export function reset(): void {
  calls.length = 0;
  textDocuments.length = 0;
  registeredCommands.length = 0;
  settings.clear();
  answers.quickPick.length = 0;
  answers.inputBox.length = 0;
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
    showWarningMessage: record('showWarningMessage'),
    showQuickPick: record('showQuickPick', (items) => answers.quickPick.shift()?.(items as unknown[])),
    showInputBox: record('showInputBox', () => answers.inputBox.shift()),
    showTextDocument: record('showTextDocument'),
    activeTextEditor: undefined,
    createStatusBarItem: () => ({ text: '', tooltip: '', command: '', show() {}, dispose() {} }),
  },
  workspace: {
    workspaceFolders: undefined,
    textDocuments,
    getConfiguration(section: string) {
      const full = (key: string): string => `${section}.${key}`;
      return {
        inspect: <T>(key: string) =>
          ({ key: full(key), ...settings.get(full(key)) }) as { key: string } & Partial<Record<Level, T>>,
        get: (key: string) => {
          const s = settings.get(full(key));
          return s?.workspaceFolderValue ?? s?.workspaceValue ?? s?.globalValue;
        },
      };
    },
  },
  commands: { executeCommand: record('executeCommand'), registerCommand: (id: string) => (registeredCommands.push(id), { dispose() {} }) },
  StatusBarAlignment: { Left: 1, Right: 2 },
  Uri: {
    parse: (s: string) => ({ scheme: s.split(':')[0], toString: () => s }),
    file: (p: string) => ({ scheme: 'file', fsPath: p, toString: () => `file://${p}` }),
  },
};

const loader = Module as unknown as { _load(request: string, parent: unknown, isMain: boolean): unknown };
const original = loader._load;
loader._load = function (request: string, parent: unknown, isMain: boolean): unknown {
  if (request === 'vscode') return vscode;
  return original.call(this, request, parent, isMain);
};
