"""JSON Schemas of the public surface, generated from the protocol types.

`python -m coder_ls.protocol.schemas [DIR]` writes them (default `schemas/`);
a test fails when the committed files are stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import msgspec

from coder_ls.protocol import args, ask, events, language, results
from coder_ls.protocol.config import Config


def _envelope(schema: dict[str, Any]) -> dict[str, Any]:
    """Every event carries sessionId, submissionId, seq and type: say so plainly."""
    for name, node in schema.get("$defs", {}).items():
        if name in {"TodoItem"}:
            continue
        props = node.get("properties", {})
        if "sessionId" in props:
            node["required"] = sorted(set(node.get("required", [])) | {"sessionId", "submissionId", "seq", "type"})
    return schema


def all_schemas() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {
        "command-result.json": msgspec.json.schema(results.CommandResult),
        "event.json": _envelope(msgspec.json.schema(events.AnyEvent)),
        "config.json": msgspec.json.schema(Config),
        # server → client requests
        "requests/coder.askUser.params.json": msgspec.json.schema(ask.AskUserParams),
        "requests/coder.askUser.result.json": msgspec.json.schema(ask.AskUserResult),
        "requests/coder.diagnostics.params.json": msgspec.json.schema(language.DiagnosticsParams),
        "requests/coder.diagnostics.result.json": msgspec.json.schema(list[language.FileDiagnostics]),
        "requests/coder.languageQuery.params.json": msgspec.json.schema(language.LanguageQueryParams),
        # server → client notifications
        "requests/coder.notify.params.json": msgspec.json.schema(ask.NotifyParams),
    }
    commands = {
        "coder.input": args.InputArgs,
        "coder.shell": args.ShellArgs,
        "coder.slash": args.SlashArgs,
        "coder.interrupt": args.InterruptArgs,
        "coder.listCommands": args.ListCommandsArgs,
        "coder.codeAction": args.CodeActionArgs,
        "coder.completeInput": args.CompleteInputArgs,
        "coder.focus": args.FocusArgs,
        "coder.plan": args.PlanArgs,
        "coder.revertHunk": args.RevertHunkArgs,
    }
    for name, kind in commands.items():
        schema = msgspec.json.schema(kind)
        schema["description"] = (
            "Argument of every coder.<name> slash command id (coder.help, coder.model, ...)"
            if name == "coder.slash"
            else f"Argument of {name}"
        )
        out[f"args/{name}.json"] = schema
    return out


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write(target: Path) -> list[Path]:
    written = []
    for rel, schema in all_schemas().items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(schema), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    dest = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("schemas")
    for p in write(dest):
        print(p)
