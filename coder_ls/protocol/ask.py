"""The model's questions to the user (`ask_user`, contract section 19) on the wire.

A client that says it has a UI for them (`initializationOptions.capabilities.askUser` or
the experimental client capability `coderAskUser`) gets the request `coder/askUser
{submissionId, questions}` and answers `{answers: [{selected, other?}] | null}`, one
answer per question in order; null (or an error) is "the user did not answer".
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from coder_ls.protocol.base import Loose, Wire


class AskOption(Wire, omit_defaults=True):
    label: Annotated[str, msgspec.Meta(min_length=1, max_length=80, description="A short answer (1-5 words)")]
    description: Annotated[str, msgspec.Meta(max_length=300, description="What choosing it means")] | None = None


class AskQuestion(Wire, omit_defaults=True):
    question: Annotated[str, msgspec.Meta(min_length=1, max_length=1000, description="The question, ending with ?")]
    options: Annotated[list[AskOption], msgspec.Meta(min_length=2, max_length=4)]
    header: Annotated[str, msgspec.Meta(max_length=30, description="A short label for the question")] | None = None
    multi_select: bool = False


class AskUserParams(Wire):
    """`coder/askUser` (server → client)."""

    submission_id: str
    questions: list[AskQuestion]


class AskAnswer(Loose, omit_defaults=True):
    """One question's answer: the chosen labels, and the free text of "Other"."""

    selected: list[str] = msgspec.field(default_factory=list)
    other: str | None = None


class AskUserResult(Loose):
    answers: list[AskAnswer] | None = None


class NotifyParams(Wire, omit_defaults=True):
    """`coder/notify` (a notification, contract section 22), to a client that declares
    `experimental.coderNotify` (or `initializationOptions.capabilities.notify`) while its
    window is not focused: a turn ended (`turnFinished`, with its `status`) or waits for
    the user (`approval`, `question`, `review`). Other clients get `window/showMessage`
    with the same `message`."""

    kind: Literal["turnFinished", "approval", "question", "review"]
    message: str
    session_id: str | None = None
    submission_id: str | None = None
    status: str | None = None
