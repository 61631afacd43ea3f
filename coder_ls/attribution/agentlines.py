"""The lines the agent wrote in one session, kept in step with the text as it changes.

Fed by the one write path of the file tools (`agent/tools/fileio.commit_text` and the
reviewed edit), not by a second bookkeeping of edits: each write reports the text it was
computed from and the text that landed. Each file keeps the text as last seen and the
spans (line ranges, 0-based, end exclusive) the agent wrote in it, with who wrote them (the
submission, its prompt's first words, the subagent) and what they replaced (for a revert).

The editor's versioned `didChange` reports the buffer's whole text. When it is the text the
agent just wrote (the editor echoing an applied edit) nothing moves; otherwise the change is
the user's: spans shift with lines inserted or removed above them, and a change inside a
span is remembered (`base`: the text before the user's first unreported change) until the
next model request takes it as a small unified diff (`take_user_edits`), once.

No I/O here: the edges and the engine supply the texts.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator

import msgspec

from coder_ls.attribution.linemap import (
    Op,
    changed,
    lines,
    map_end,
    map_start,
    opcodes,
    shift,
    text_opcodes,
    touches,
    unified,
)

MAX_DIFF_LINES = 40  # the user's changes told to the model: at most this many diff lines ...
MAX_DIFF_BYTES = 4000  # ... and bytes, all files together
MAX_FILES = 256  # files tracked per session (the oldest go first)
MAX_LINES = 50_000  # a larger text is not tracked (a diff per keystroke) ...
MAX_CHARS = 8 * 1024 * 1024  # ... nor a buffer grown past this
PROMPT_WORDS = 6


class Author(msgspec.Struct, frozen=True):
    submission_id: str
    prompt: str  # the submission's prompt, its first words
    subagent: str | None = None


class Span(msgspec.Struct):
    id: str  # unguessable: the code lens's command names it
    start: int
    end: int
    old_text: str  # what these lines replaced
    agent_text: str  # the lines as the agent left them
    author: Author


class UserEdit(msgspec.Struct, frozen=True):
    """The user's change to lines the agent wrote: `path` as shown, `diff` unified."""

    path: str
    diff: str


class _File:
    __slots__ = ("base", "spans", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.spans: list[Span] = []
        self.base: str | None = None  # the text before the user's unreported change to a span


def first_words(prompt: str) -> str:
    words = prompt.split()
    shown = " ".join(words[:PROMPT_WORDS])
    return shown + ("…" if len(words) > PROMPT_WORDS else "")


def key_of(path: str | os.PathLike[str]) -> str:
    """How a file is named here: its absolute, normalized path (the tools' and the editor's agree)."""
    return os.path.normpath(os.path.abspath(os.fspath(path)))


class AgentLines:
    """One session's record (kept as a session extension, `Session.extension`)."""

    def __init__(self) -> None:
        self._files: dict[str, _File] = {}
        self._expected: dict[str, str] = {}  # key -> the text an edit being applied will leave
        self._dropping: dict[str, str] = {}  # key -> the span a revert being applied puts back
        self._prompts: dict[str, str] = {}  # submission id -> first words of its prompt
        self._held: list[UserEdit] = []  # user edits frozen before the agent wrote over them
        self.version = 0  # bumped when spans are added or removed (the lenses change)

    # -- the agent's side ---------------------------------------------------------------
    def prompt(self, submission_id: str, prompt: str) -> None:
        self._prompts[submission_id] = first_words(prompt)
        while len(self._prompts) > 1024:
            del self._prompts[next(iter(self._prompts))]

    def expect(self, key: str, text: str, reverting: str | None = None) -> None:
        """An edit leaving `text` is on its way: the editor's echo of it is not the user's.
        `reverting`: the edit puts back that span; once the editor shows `text`, it is gone
        (the lenses the editor asks for on that change, before the edit is answered, leave it out)."""
        self._expected[key] = text
        if reverting is not None:
            self._dropping[key] = reverting
        else:
            self._dropping.pop(key, None)

    def unexpect(self, key: str) -> None:
        self._expected.pop(key, None)
        self._dropping.pop(key, None)

    def wrote(self, key: str, name: str, before: str, after: str, submission_id: str, subagent: str | None) -> None:
        """The agent changed `key` (shown as `name`) from `before` to `after`."""
        self._expected.pop(key, None)
        self._dropping.pop(key, None)
        if before == after or max(before.count("\n"), after.count("\n")) > MAX_LINES:
            return
        f = self._files.get(key)
        if f is None:
            f = self._files[key] = _File(before)
            while len(self._files) > MAX_FILES:
                del self._files[next(iter(self._files))]
        elif f.text != before:
            self._moved(f, before, by_user=False)  # a change we did not see: a shell command's, say
        if f.base is not None:  # the user's unreported change, told before the agent's lands on it
            self._held.extend(self._diff(f, name))
        author = Author(submission_id, self._prompts.get(submission_id, ""), subagent)
        self._agent_changed(f, after, author)
        self.version += 1

    def _agent_changed(self, f: _File, after: str, author: Author) -> None:
        old, new = lines(f.text), lines(after)
        ops = opcodes(old, new)
        hunks = [(o.i1, o.i2) for o in changed(ops)]
        # a span the agent writes into, or right next to, joins that hunk: one span, newest author
        joining = [s for s in f.spans if any(i1 <= s.end and s.start <= i2 for i1, i2 in hunks)]
        kept = [s for s in f.spans if s not in joining]
        items = sorted([(i1, i2, None) for i1, i2 in hunks] + [(s.start, s.end, s) for s in joining],
                       key=lambda t: (t[0], t[1]))  # fmt: skip
        groups: list[tuple[int, int, list[Span]]] = []  # old lines [lo, hi) and the spans merged in
        for lo, hi, span in items:
            if groups and lo <= groups[-1][1]:
                g = groups[-1]
                groups[-1] = (g[0], max(g[1], hi), g[2] + ([span] if span is not None else []))
            else:
                groups.append((lo, hi, [span] if span is not None else []))
        out: list[Span] = []
        for s in kept:
            s.start, s.end = map_start(ops, s.start, "inner"), map_end(ops, s.end, "inner")
            out.append(s)
        for lo, hi, spans in groups:
            new_lo, new_hi = map_start(ops, lo, "outer"), map_end(ops, hi, "outer")
            if new_hi <= new_lo:
                continue  # the agent removed these lines: nothing left to point at
            parts, at = [], lo
            for s in sorted(spans, key=lambda s: s.start):
                parts.append("".join(old[at : s.start]) + s.old_text)
                at = s.end
            parts.append("".join(old[at:hi]))
            out.append(Span(secrets.token_hex(8), new_lo, new_hi, "".join(parts), "".join(new[new_lo:new_hi]), author))
        f.spans = sorted(out, key=lambda s: s.start)
        f.text = after

    def reverted(self, key: str, span_id: str, after: str) -> None:
        """A span was put back as it was (the text is now `after`): it is gone, the others moved."""
        self._expected.pop(key, None)
        self._dropping.pop(key, None)
        f = self._files.get(key)
        if f is not None:
            self._drop(f, span_id, after)

    def _drop(self, f: _File, span_id: str, after: str) -> None:
        ops = text_opcodes(f.text, after)
        spans = [s for s in f.spans if s.id != span_id]
        for s in spans:
            s.start, s.end = map_start(ops, s.start, "inner"), map_end(ops, s.end, "inner")
        f.spans, f.text = spans, after
        self.version += 1

    # -- the user's side ----------------------------------------------------------------
    def editor_text(self, key: str, text: str) -> None:
        """The editor's buffer of `key` is now `text` (a versioned didChange)."""
        f = self._files.get(key)
        if f is None or text == f.text:
            return
        if text == self._expected.get(key):  # the editor applying the agent's edit, before the tool heard back
            if (span_id := self._dropping.pop(key, None)) is not None:
                self._drop(f, span_id, text)  # a revert: its span is gone from the buffer
            return
        self._moved(f, text, by_user=True)

    def disk_text(self, key: str, text: str) -> None:
        """`key` holds `text` on disk and is not open in the editor: the spans follow, but
        nothing is told to the model (a shell command may have written it, the agent's own)."""
        f = self._files.get(key)
        if f is not None and text != f.text:
            self._moved(f, text, by_user=False)

    def _moved(self, f: _File, text: str, *, by_user: bool) -> None:
        """The text went from `f.text` to `text`: move the spans (those wholly before or after
        the changed lines by arithmetic), and remember a change of the user's inside one."""
        if len(text) > MAX_CHARS:  # no longer followed
            self._files = {k: v for k, v in self._files.items() if v is not f}
            return
        ops = text_opcodes(f.text, text)
        edits = changed(ops)
        if edits:
            lo, hi, delta = edits[0].i1, edits[-1].i2, ops[-1].j2 - ops[-1].i2
            hit = False
            for s in f.spans:
                if s.end <= lo and not s.start == s.end == lo:
                    continue
                if s.start >= hi and not s.start == s.end == hi:
                    s.start, s.end = s.start + delta, s.end + delta
                    continue
                hit = hit or (by_user and any(touches(o, s.start, s.end) for o in edits))
                s.start, s.end = shift(ops, s.start, s.end)
            if hit and f.base is None:
                f.base = f.text
        f.text = text

    def take_user_edits(self, root: str) -> list[UserEdit]:
        """The user's changes to the agent's lines since the last call (each told once)."""
        out, self._held = list(self._held), []
        for key, f in self._files.items():
            if f.base is not None:
                out.extend(self._diff(f, _shown(root, key)))
        return _capped(out)

    def _diff(self, f: _File, name: str) -> list[UserEdit]:
        base, f.base = f.base, None
        if base is None:
            return []
        hunks = [h for h in unified(lines(base), lines(f.text), name) if _meets(h[0], h[1], f.spans)]
        if not hunks:
            return []
        text = "\n".join([f"--- a/{name}", f"+++ b/{name}", *(line for h in hunks for line in h[2])])
        return [UserEdit(name, text)]

    # -- lenses and reverts -------------------------------------------------------------
    def spans(self, key: str) -> list[Span]:
        f = self._files.get(key)
        return [s for s in f.spans if s.end > s.start] if f is not None else []

    def text(self, key: str) -> str | None:
        f = self._files.get(key)
        return f.text if f is not None else None

    def find(self, span_id: str) -> tuple[str, Span] | None:
        for key, f in self._files.items():
            for s in f.spans:
                if secrets.compare_digest(s.id, span_id):
                    return key, s
        return None

    def keys(self) -> Iterator[str]:
        return iter(list(self._files))


def changed_since(span: Span, text: str) -> str | None:
    """Why `span` cannot be reverted in `text` (None: its lines are still the agent's)."""
    now = lines(text)[span.start : span.end]
    if span.end <= span.start:
        return "the lines the agent wrote there are gone"
    if "".join(now) == span.agent_text:
        return None
    want = lines(span.agent_text)
    which = next((span.start + i for i, (a, b) in enumerate(zip(now, want, strict=False)) if a != b), None)
    where = f"line {which + 1}" if which is not None else f"lines {span.start + 1}-{span.end}"
    return f"{where} changed since the agent wrote it; reverting would lose that change"


def revert_text(text: str, span: Span) -> tuple[str, int, int, int, int, str]:
    """(the text with `span` put back, and the edit: start line, start character, end line,
    end character (UTF-16), new text)."""
    ls = lines(text)
    old = span.old_text
    last_open = bool(ls) and span.end >= len(ls) and not ls[-1].endswith(("\n", "\r"))
    if last_open:  # the span ends on the file's last line, which has no newline
        old = old[:-1] if old.endswith("\n") else old
        end_line, end_char = span.end - 1, len(ls[-1].encode("utf-16-le")) // 2
    else:
        end_line, end_char = span.end, 0
    new = "".join(ls[: span.start]) + old + "".join(ls[span.end :])
    return new, span.start, 0, end_line, end_char, old


def _meets(first: int, count: int, spans: list[Span]) -> bool:
    return any(first <= s.end and s.start <= first + count for s in spans)


def _shown(root: str, key: str) -> str:
    rel = os.path.relpath(key, root)
    return key if rel.startswith("..") else rel.replace(os.sep, "/")


def _capped(edits: list[UserEdit]) -> list[UserEdit]:
    out: list[UserEdit] = []
    used_lines = used_bytes = 0
    for e in edits:
        body = e.diff.splitlines()
        room = MAX_DIFF_LINES - used_lines
        if room <= 0 or used_bytes >= MAX_DIFF_BYTES:
            out.append(UserEdit(e.path, f"(the user also changed lines the agent wrote in {e.path}; read it again)"))
            continue
        cut = body[:room]
        text = "\n".join(cut)[: MAX_DIFF_BYTES - used_bytes]
        if len(cut) < len(body) or len(text) < len("\n".join(cut)):
            text += f"\n… (cut; read {e.path} for the rest)"
        used_lines += len(cut)
        used_bytes += len(text)
        out.append(UserEdit(e.path, text))
    return out


def render(edits: list[UserEdit]) -> str:
    """The note the model gets: which lines of its own the user changed, and how."""
    head = (
        "Since your last request the user edited lines you changed in this session. "
        "Keep their changes; do not undo them:"
    )
    return "\n".join([head, *(f"```diff\n{e.diff}\n```" for e in edits)])


__all__ = ["AgentLines", "Author", "Op", "Span", "UserEdit", "changed_since", "key_of", "render", "revert_text"]
