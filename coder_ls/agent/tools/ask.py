"""`ask_user`: the model asks the user one to four multiple-choice questions.

Each question has two to four options (label, description) and always a free-text
"Other". A client with its own UI for it (`ClientCaps.ask_user`: VS Code's quick pick,
Neovim's `vim.ui.select`) gets them all in one `coder/askUser` request; any other client
gets one `window/showMessageRequest` per question, the options as its actions (and
"Other", which asks the user to type the answer as their next message: a message request
has no text field). No answer within `approvals.timeoutSeconds`, or a dismissed question,
ends the tool with "the user did not answer"; Escape (an interrupt) ends the turn as
always. The questions are the tool call's input and the answers its result, so both are
in the session log.

Only the main agent asks: a subagent runs beside others and the user cannot tell who asks.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

import msgspec

from coder_ls.agent.tools.base import Tool, ToolContext, ToolError, ToolOutput
from coder_ls.protocol.ask import AskAnswer, AskQuestion

OTHER = "Other…"
NOT_ANSWERED = "The user did not answer. Go on without it if you can, or stop and say what you need."


class AskInput(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    """Ask the user one to four multiple-choice questions (each with two to four options;
    the user can always answer in their own words instead). Use it when a decision is the
    user's (what to set up, which approach they prefer), not for what you can find out."""

    questions: Annotated[list[AskQuestion], msgspec.Meta(min_length=1, max_length=4)]


def _checked(questions: list[AskQuestion]) -> None:
    for n, q in enumerate(questions, 1):
        labels = [o.label for o in q.options]
        if len(set(labels)) != len(labels):
            raise ToolError(f"question {n}: two options have the same label")
        if any(label == OTHER or label.lower() == "other" for label in labels):
            raise ToolError(f'question {n}: leave out "Other": the user is always offered it')


def _describe(questions: list[AskQuestion], answers: list[AskAnswer]) -> str:
    lines = ["The user answered:"]
    for n, (q, a) in enumerate(zip(questions, answers, strict=True), 1):
        offered = {o.label for o in q.options}
        chosen = [label for label in a.selected if label in offered]
        parts = [", ".join(chosen)] if chosen else []
        if a.other and a.other.strip():
            parts.append(f"(in their own words) {a.other.strip()}")
        lines.append(f"{n}. {q.question} → {'; '.join(parts) if parts else '(no answer)'}")
    return "\n".join(lines)


async def _by_message_requests(ctx: ToolContext, questions: list[AskQuestion]) -> list[AskAnswer] | None:
    """One `window/showMessageRequest` per question; a dismissed one ends the asking."""
    answers: list[AskAnswer] = []
    for n, q in enumerate(questions, 1):
        head = f"[{q.header}] " if q.header else ""
        details = "\n".join(f"{o.label}: {o.description}" for o in q.options if o.description)
        many = " (one choice here; say more in the chat)" if q.multi_select else ""
        message = f"{ctx.actor} asks ({n}/{len(questions)}): {head}{q.question}{many}" + (
            f"\n{details}" if details else ""
        )
        choice = await ctx.host.ask("info", message, [*(o.label for o in q.options), OTHER])
        if choice is None:
            return None
        if choice == OTHER:
            answers.append(AskAnswer(other="(the user chose Other: they will type their answer as their next message)"))
        else:
            answers.append(AskAnswer(selected=[choice]))
    return answers


def make_ask_tool() -> Tool[AskInput]:
    async def run(ctx: ToolContext, inp: AskInput) -> ToolOutput:
        if ctx.actor != "Coder":
            raise ToolError("only the main agent can ask the user; say in your answer what needs deciding")
        _checked(inp.questions)
        if ctx.host.caps.ask_user:
            asking = ctx.host.ask_user(ctx.submission_id, inp.questions)
        elif ctx.host.caps.show_message_request:
            asking = _by_message_requests(ctx, inp.questions)
        else:
            return ToolOutput(NOT_ANSWERED)
        ctx.report("Waiting for your answer")
        timeout = ctx.config.approvals.timeout_seconds
        try:
            answers = await asyncio.wait_for(asking, timeout)
        except TimeoutError:
            ctx.host.show_message("warning", f"Coder: the questions were not answered within {timeout:g}s.")
            return ToolOutput(NOT_ANSWERED)
        if not answers:
            return ToolOutput(NOT_ANSWERED)
        return ToolOutput(_describe(inp.questions, answers))

    return Tool(
        "ask_user",
        "Ask the user one to four multiple-choice questions and wait for the answers. Each "
        "question has 2-4 options (label: 1-5 words; description: what it means); set "
        'multiSelect when several may apply. Do not add an "Other" option: the user can '
        "always answer in their own words. Use it for the user's decisions, not for facts "
        "you can look up.",
        AskInput,
        run,
    )
