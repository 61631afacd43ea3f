"""Persistent state under `<root>/.coder/`: session logs, the session index, time formatting.

- `log`: one append-only JSONL log per session (the truth).
- `index`: `index.sqlite`, a rebuildable index of sessions and messages.
- `gitignore`: the state directory and its `.gitignore`.
- `timefmt`: timestamps shown in the configured timezone.
"""
