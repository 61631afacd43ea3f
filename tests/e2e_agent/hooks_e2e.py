"""Helpers for the hooks end-to-end tests: a server of its own with a private HOME (the
user's `~/.claude/settings.json` is the test's), hook settings written as Claude Code
users write them, and the real hook scripts of tests/corpus/hooks."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from agent_e2e import api_env
from anthropic_server import FakeAnthropicServer
from harness import Session, full_caps, lsp_session
from lsprotocol import types

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "hooks"


def home_of(root: Path) -> Path:
    return root.parent / f"home-{root.name}"


def write_settings(path: Path, hooks: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}, indent=2))


def group(command: str, matcher: str = "", **extra: Any) -> list[dict[str, Any]]:
    return [{"matcher": matcher, "hooks": [{"type": "command", "command": command, **extra}]}]


def dump_stdin(target: Path) -> str:
    """A hook that appends its stdin (one JSON object) as a line of `target`."""
    return f"cat >> {target}; echo >> {target}"


def inputs(target: Path) -> list[dict[str, Any]]:
    if not target.exists():
        return []
    return [json.loads(line) for line in target.read_text().splitlines() if line.strip()]


@asynccontextmanager
async def hooks_server(root: Path, fake: FakeAnthropicServer) -> AsyncIterator[Session]:
    home = home_of(root)
    home.mkdir(parents=True, exist_ok=True)
    async with lsp_session(root, caps=full_caps(), env={**api_env(fake), "HOME": str(home)}) as s:
        yield s


async def fresh(s: Session, fake: FakeAnthropicServer, **settings: Any) -> None:
    """A new session with these settings (yolo by default), an empty script and client lists."""
    with fake._lock:
        fake._queue.clear()
    fake.requests.clear()
    s.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"coder": {"permissions": "yolo", **settings}})
    )
    result = await s.execute("coder.new", {})
    assert result["status"] == "completed", result
    s.events.clear()
    s.questions.clear()
    s.client.messages.clear()
    s.answer_question = lambda p: None


def hook_runs(s: Session) -> list[tuple[str, str]]:
    return [(e["event"], e["decision"]) for e in s.events_of("hookRan")]


def shown(s: Session) -> str:
    return "\n".join(m.message for m in s.client.messages)
