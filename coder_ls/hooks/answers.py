"""What one hook's exit code and output mean, as Claude Code defines it, and how the
answers of several hooks of one event combine.

- exit 0: stdout is JSON (the fields below) or, for UserPromptSubmit and SessionStart,
  plain text added as context for the model;
- exit 2: blocks; stderr is the reason (to the model for tool and stop events, to the
  user for a prompt); for events that cannot be blocked it is shown to the user;
- any other exit, a timeout, a hook that cannot start: a failure, shown to the user and
  otherwise non-blocking, as in Claude Code, unless the hook says `failClosed: true`:
  then it blocks like exit 2 (a crashed guard does not let the call through).

JSON: `continue: false` (+ `stopReason`) ends the turn; `systemMessage` is shown to the
user; `decision: "block"` + `reason`; `hookSpecificOutput.permissionDecision`
allow/deny/ask (+ `permissionDecisionReason`, `updatedInput`) for PreToolUse;
`hookSpecificOutput.decision.behavior` allow/deny (+ `message`, `updatedInput`) for
PermissionRequest; `hookSpecificOutput.additionalContext`. The older PreToolUse
`decision: "approve" | "block"` is read as allow / deny.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from coder_ls.hooks.records import Decision, Verdict
from coder_ls.hooks.runner import HookRun

TOOL_GATES = ("PreToolUse", "PermissionRequest")
PLAIN_CONTEXT = ("UserPromptSubmit", "SessionStart")
BLOCKABLE = ("PreToolUse", "PermissionRequest", "UserPromptSubmit", "Stop", "SubagentStop")
_RANK: dict[str, int] = {"none": 0, "allow": 1, "ask": 2, "block": 3, "deny": 3}


def failure_text(run: HookRun) -> str:
    if run.error:
        return run.error
    detail = run.stderr.strip() or run.stdout.strip()
    return f"exited with {run.exit_code}" + (f": {detail[:500]}" if detail else "")


def _json(stdout: str) -> dict[str, Any] | None:
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _blocked(event: str, reason: str) -> Verdict:
    decision: Decision = "deny" if event in TOOL_GATES else "block"
    return Verdict(decision=decision, blocked=event in BLOCKABLE, reason=reason)


def interpret(event: str, run: HookRun) -> Verdict:
    """One hook's answer."""
    spec = run.spec
    if run.failed:
        if spec.fail_closed:  # the dispatcher tells the user about every failure
            return _blocked(event, f"A guard hook failed, so this was blocked ({failure_text(run)}).")
        return Verdict()
    if run.exit_code == 2:
        reason = run.stderr.strip() or f"blocked by hook {spec.name!r}"
        verdict = _blocked(event, reason)
        if event not in BLOCKABLE and event not in ("PostToolUse", "PostToolUseFailure"):
            return Verdict(messages=(f"hook {spec.name!r} ({event}): {reason}",))
        if event in ("PostToolUse", "PostToolUseFailure"):
            return Verdict(decision="block", reason=reason)  # the tool ran: the model is told
        return verdict
    data = _json(run.stdout)
    if data is None:
        text = run.stdout.strip()
        if text and event in PLAIN_CONTEXT:
            return Verdict(context=(text,))
        return Verdict()
    return _from_json(event, data)


def _from_json(event: str, data: dict[str, Any]) -> Verdict:
    decision: Decision = "none"
    reason = str(data.get("reason") or "")
    updated: dict[str, Any] | None = None
    context: list[str] = []
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    legacy = data.get("decision")
    if legacy == "block":
        decision = "deny" if event in TOOL_GATES else "block"
    elif legacy == "approve" and event in TOOL_GATES:
        decision = "allow"
    if event == "PreToolUse":
        pd = specific.get("permissionDecision")
        if pd in ("allow", "deny", "ask"):
            decision = pd
            reason = str(specific.get("permissionDecisionReason") or reason)
        if isinstance(specific.get("updatedInput"), dict):
            updated = specific["updatedInput"]
    if event == "PermissionRequest":
        d = specific.get("decision")
        if isinstance(d, dict) and d.get("behavior") in ("allow", "deny"):
            decision = d["behavior"]
            reason = str(d.get("message") or reason)
            if isinstance(d.get("updatedInput"), dict):
                updated = d["updatedInput"]
    if isinstance(specific.get("additionalContext"), str) and specific["additionalContext"].strip():
        context.append(specific["additionalContext"])
    stop = data.get("continue") is False
    messages = (str(data["systemMessage"]),) if isinstance(data.get("systemMessage"), str) else ()
    blocked = decision in ("deny", "block") and event in BLOCKABLE
    if decision == "block" and event in ("PostToolUse", "PostToolUseFailure"):
        blocked = False  # the tool already ran: the reason goes to the model
    return Verdict(
        decision=decision,
        blocked=blocked,
        reason=reason,
        context=tuple(context),
        updated_input=updated if decision in ("allow", "none", "ask") else None,
        stop=stop,
        stop_reason=str(data.get("stopReason") or ""),
        messages=messages,
    )


def combine(verdicts: Sequence[Verdict]) -> Verdict:
    """The answers of one event's hooks together: the strictest decision wins (deny >
    ask > allow); reasons and contexts are all kept, in the hooks' order."""
    if not verdicts:
        return Verdict()
    top = max(verdicts, key=lambda v: _RANK[v.decision])
    deciding = [v for v in verdicts if v.decision == top.decision]
    reasons = [v.reason for v in (deciding if top.decision != "none" else verdicts) if v.reason]
    updated = next((v.updated_input for v in deciding if v.updated_input is not None), None)
    return Verdict(
        decision=top.decision,
        blocked=any(v.blocked for v in verdicts),
        reason="\n".join(dict.fromkeys(reasons)),
        context=tuple(c for v in verdicts for c in v.context),
        updated_input=updated if top.decision not in ("deny", "block") else None,
        stop=any(v.stop for v in verdicts),
        stop_reason="\n".join(v.stop_reason for v in verdicts if v.stop_reason),
        messages=tuple(m for v in verdicts for m in v.messages),
    )
