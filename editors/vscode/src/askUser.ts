/**
 * `coder/askUser`: the model's `ask_user` questions (docs/protocol.md, "Asking the user"),
 * one quick pick per question (several picks when `multiSelect`), with an "Other…" item
 * that asks for the answer in the user's own words in an input box. Escape on any of
 * them answers `{answers: null}`: the model is told the user did not answer.
 */
import * as vscode from 'vscode';

export const ASK_USER_METHOD = 'coder/askUser';
export const OTHER = 'Other…';

export interface AskOption {
  label: string;
  description?: string;
}
export interface AskQuestion {
  question: string;
  header?: string;
  options: AskOption[];
  multiSelect?: boolean;
}
export interface AskAnswer {
  selected: string[];
  other?: string;
}
export interface AskParams {
  submissionId: string;
  questions: AskQuestion[];
}

/** The parts of `vscode.window` it uses (tests pass their own). */
export interface AskUi {
  showQuickPick: typeof vscode.window.showQuickPick;
  showInputBox: typeof vscode.window.showInputBox;
}

export function pickItems(q: AskQuestion): vscode.QuickPickItem[] {
  return [
    ...q.options.map((o) => ({ label: o.label, detail: o.description })),
    { label: OTHER, detail: 'Answer in your own words' },
  ];
}

export async function askUser(
  params: AskParams,
  ui: AskUi = vscode.window,
  token?: vscode.CancellationToken,
): Promise<{ answers: AskAnswer[] | null }> {
  const answers: AskAnswer[] = [];
  const total = params.questions.length;
  for (const [i, q] of params.questions.entries()) {
    // the question in the title too: the placeholder goes as soon as the user types
    const title = `Coder asks (${i + 1}/${total})${q.header ? ` [${q.header}]` : ''}: ${q.question}`;
    const options = { title, placeHolder: q.question, ignoreFocusOut: true, matchOnDetail: true };
    let labels: string[];
    if (q.multiSelect) {
      const picks = await ui.showQuickPick(pickItems(q), { ...options, canPickMany: true }, token);
      if (!picks || token?.isCancellationRequested) return { answers: null };
      labels = picks.map((p) => p.label);
    } else {
      const pick = await ui.showQuickPick(pickItems(q), options, token);
      if (!pick || token?.isCancellationRequested) return { answers: null };
      labels = [pick.label];
    }
    const answer: AskAnswer = { selected: labels.filter((l) => l !== OTHER) };
    if (labels.includes(OTHER)) {
      const text = await ui.showInputBox({ title, prompt: q.question, ignoreFocusOut: true }, token);
      if (text === undefined || token?.isCancellationRequested) return { answers: null };
      if (text.trim()) answer.other = text.trim();
    }
    answers.push(answer);
  }
  return { answers };
}
