"""A mutable result under construction: handlers fill it as they go, so that a
cancelled submission still reports what had already happened."""

from __future__ import annotations

from coder_ls.protocol.results import CommandResult, Data, ErrorInfo, Mode, Status


class ResultBuilder:
    def __init__(self, session_id: str, submission_id: str) -> None:
        self.session_id = session_id
        self.submission_id = submission_id
        self.mode: Mode = "command"
        self.status: Status = "completed"
        self.reply = ""
        self.command: str | None = None
        self.raw_output: str | None = None
        self.exit_code: int | None = None
        self.data: Data | None = None
        self.error: ErrorInfo | None = None

    def fail(self, code: str, message: str, *, mode: Mode = "error") -> None:
        self.mode = mode
        self.status = "failed"
        self.reply = message
        self.error = ErrorInfo(code=code, message=message)

    def build(self) -> CommandResult:
        return CommandResult(
            session_id=self.session_id,
            submission_id=self.submission_id,
            mode=self.mode,
            status=self.status,
            reply=self.reply,
            command=self.command,
            raw_output=self.raw_output,
            exit_code=self.exit_code,
            data=self.data,
            error=self.error,
        )
