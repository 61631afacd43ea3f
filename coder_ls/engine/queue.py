"""The line of a session's submissions that must not overlap (contract section 12).

Agent turns, `!cmd`, `/clear`, `/new`, `/resume`, `/compact`, `/undo`, code actions and
prompt commands take their turn: one runs, the others wait in the order they arrived.
Read-only commands (`/help`, `/sessions`, `/diff`, ...) never enter the line.
"""

from __future__ import annotations

from collections import deque

from coder_ls.engine.submission import SubmissionState


class SessionQueue:
    def __init__(self) -> None:
        self.running: SubmissionState | None = None
        self.waiting: deque[SubmissionState] = deque()

    @property
    def busy(self) -> bool:
        return self.running is not None or bool(self.waiting)

    def enter(self, state: SubmissionState) -> int:
        """0 when `state` may start now (it is admitted), else its place in the line (1 = next)."""
        if self.running is None and not self.waiting:
            self.running = state
            state.admit()
            return 0
        self.waiting.append(state)
        return sum(1 for s in self.waiting if not s.cancelled)

    def leave(self, state: SubmissionState) -> None:
        """`state` is over (done, or cancelled before it ran): let the next one start."""
        if self.running is state:
            self.running = None
        elif state in self.waiting:
            self.waiting.remove(state)
        while self.running is None and self.waiting:
            nxt = self.waiting.popleft()
            if nxt.cancelled:
                continue  # woken by its cancel; it answers without running
            self.running = nxt
            nxt.admit()
