"""A session's submissions, read from its log (read side only; `store/log.py` writes).

`/rewind` and `/diff turn` number a session's submissions 1, 2, ... in the order they first
appear in the log: an agent turn by its user message, a `!cmd` by its shell entry. Commands
that write no message (`/diff`, `/compact`, ...) are not numbered. The log keeps every
submission, also those a `/compact`, `/clear` or `/rewind` took out of the model context, so
the numbers stay the same across them and across `/resume`.
"""

from __future__ import annotations

import msgspec

from coder_ls.protocol.messages import Message, TextBlock, ToolResultBlock
from coder_ls.store.log import (
    ClearEntry,
    CompactionEntry,
    LoadedSession,
    MessageEntry,
    ShellEntry,
    TitleEntry,
    answer_tool_calls,
    load_entries,
)


class LoggedSubmission(msgspec.Struct, frozen=True):
    index: int  # 1-based
    submission_id: str
    ts: float
    text: str  # its first line: the user's words, or `!cmd`


SHELL_HEAD = "I ran a shell command myself:"  # how `engine/tasks.shell_message` puts a `!cmd` in the context


def _first_line(message: Message) -> str | None:
    if any(isinstance(b, ToolResultBlock) for b in message.content):
        return None
    texts = [b.text for b in message.content if isinstance(b, TextBlock) and b.text.strip()]
    if not texts:
        return None
    lines = texts[0].strip().splitlines()
    if lines[0] == SHELL_HEAD and len(lines) > 1 and lines[1].startswith("$ "):
        return "!" + lines[1][2:][:200]
    return lines[0][:200]


def list_submissions(loaded: LoadedSession) -> list[LoggedSubmission]:
    seen: dict[str, LoggedSubmission] = {}
    for entry in loaded.entries:
        match entry:
            case ShellEntry(submission_id=sid, command=command, ts=ts) if sid:
                text = f"!{command}"
            case MessageEntry(message=message, submission_id=sid, ts=ts) if sid and message.role == "user":
                first = _first_line(message)
                if first is None:
                    continue
                text = first
            case _:
                continue
        if sid not in seen:
            seen[sid] = LoggedSubmission(index=len(seen) + 1, submission_id=sid, ts=ts, text=text)
        elif text.startswith("!") and not seen[sid].text.startswith("!"):
            seen[sid] = msgspec.structs.replace(seen[sid], text=text)  # a `!cmd` is shown as typed
    return list(seen.values())


def context_before(loaded: LoadedSession, submission_id: str) -> list[Message]:
    """The model context as it was just before `submission_id`'s first entry (the same replay
    as loading a log: `/clear` empties it, a compaction replaces it by its summary and kept
    messages), every tool call answered."""
    context: list[Message] = []
    summary: str | None = None
    for entry in loaded.entries:
        if getattr(entry, "submission_id", None) == submission_id:
            break
        match entry:
            case MessageEntry(message=message):
                context.append(message)
            case ClearEntry():
                context, summary = [], None
            case CompactionEntry(summary=text, kept=kept):
                context, summary = list(kept), text
            case _:
                pass
    if summary is not None:
        context.insert(0, Message(role="user", content=[TextBlock(text=summary)]))
    return answer_tool_calls(context)


def history_before(loaded: LoadedSession, submission_id: str) -> LoadedSession:
    """The log as it was just before `submission_id`'s first entry: the history of a session
    forked before it (edit and resend). A title written for that very submission (the first
    of its session) is left out: the fork takes its title from its own first text."""
    cut = next(
        (n for n, e in enumerate(loaded.entries) if getattr(e, "submission_id", None) == submission_id),
        len(loaded.entries),
    )
    entries = loaded.entries[:cut]
    if not any(isinstance(e, MessageEntry | ShellEntry) for e in entries):
        entries = [e for e in entries if not isinstance(e, TitleEntry)]
    return load_entries(loaded.header, entries)
