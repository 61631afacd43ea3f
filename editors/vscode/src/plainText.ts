/**
 * Text that is not ours, shown in a notification, stays text. VS Code renders
 * `[label](https://…|command:…|file:…)` in a notification's message (and in a progress
 * notification's title and message) as a link showing only its label, and runs a
 * `command:` target when it is clicked. Coder's messages quote what the model chose (the
 * bash approval question, `window/showMessageRequest`, quotes the command; the
 * `Running: <cmd>` progress; errors quote the input): left as it is, an approval could read
 * `echo 'clean up'` while the command holds a hidden target, and put a one-click
 * `command:` link in front of the user. `plain()` breaks the link syntax with a zero-width
 * space between `]` and `(`: the message reads the same and shows what runs, target
 * included. Pure (no `vscode`): the unit tests run it against VS Code's own pattern.
 */

const ZWSP = '\u200b';

/** `text` with every `](` broken, so no part of it is a link in a notification. */
export function plain(text: string): string {
  return text.replace(/\]\(/g, `]${ZWSP}(`);
}
