"""`/export`'s renderings of a session log (contract section 19): Markdown, or the raw log.

Markdown follows the log, not the model context: everything the session did stays readable,
also what `/compact`, `/clear` or `/rewind` took out of the context (they show as markers).
Messages, tool calls with their inputs and results, the `edit` tool's change as a diff, `!cmd`
output (and, added by the task, what each submission changed in the files, from the undo
records), and images: an image block (whatever layer defines it; tagged "image" on the wire)
is written as a file beside the export and linked. Secrets are redacted from all of it by the
one redaction (`guard/redact.py`) as in the server's logs.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import hashlib
import json
from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from coder_ls.protocol.messages import Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from coder_ls.store import log as slog
from coder_ls.store.timefmt import format_time

EDIT_TEXTS = ("old_string", "new_string", "oldString", "newString")  # shown as the diff instead
IMAGE_EXT = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}
# an image stored by content hash (wt-in's `.coder/blobs/<hash>`): its bytes, or None
BlobReader = Callable[[str], bytes | None]


class Rendered(msgspec.Struct):
    text: str
    images: dict[str, bytes]  # file name (beside the export, in its `<stem>.files/` folder) -> bytes


def fence(text: str, lang: str = "") -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def _edit_diff(inp: dict[str, Any]) -> str | None:
    old, new = inp.get("old_string", inp.get("oldString")), inp.get("new_string", inp.get("newString"))
    if not isinstance(old, str) or not isinstance(new, str):
        return None
    path = str(inp.get("path", inp.get("file_path", "file")))
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{path}", f"b/{path}", lineterm="")
    return "\n".join(lines)


def _image(block: object, blobs: BlobReader, files: dict[str, bytes], dir_name: str) -> str:
    """The Markdown of an image block, its bytes added to `files`."""
    fields = msgspec.to_builtins(block) if isinstance(block, msgspec.Struct) else {}
    media = str(fields.get("mediaType") or fields.get("media_type") or "")
    found = fields.get("source")
    source: dict[str, Any] = found if isinstance(found, dict) else {}
    data: bytes | None = None
    raw = fields.get("data") or source.get("data")
    if isinstance(raw, str):
        try:
            data = base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError):
            data = None
        media = media or str(source.get("media_type", ""))
    digest = fields.get("hash") or fields.get("sha256")
    if data is None and isinstance(digest, str):
        data = blobs(digest)
    if data is None:
        return "*[an image, not stored]*"
    name = f"{hashlib.sha256(data).hexdigest()[:16]}.{IMAGE_EXT.get(media, 'bin')}"
    files[name] = data
    return f"![image]({dir_name}/{name})"


def _blocks(
    message: Message, tools: dict[str, str], blobs: BlobReader, files: dict[str, bytes], dir_name: str
) -> list[str]:
    out: list[str] = []
    for block in message.content:
        match block:
            case TextBlock(text=text):
                out.append(text.strip())
            case ThinkingBlock(thinking=thinking):
                if thinking.strip():
                    out.append("<details><summary>Thinking</summary>\n\n" + thinking.strip() + "\n\n</details>")
            case ToolUseBlock(id=cid, name=name, input=inp):
                tools[cid] = name
                diff = _edit_diff(inp) if name == "edit" else None
                shown = {k: v for k, v in inp.items() if diff is None or k not in EDIT_TEXTS}
                out.append(
                    f"**Tool call `{name}`** (`{cid}`)\n\n"
                    + fence(json.dumps(shown, indent=2, ensure_ascii=False), "json")
                )
                if diff:
                    out.append(fence(diff, "diff"))
            case ToolResultBlock(tool_use_id=cid, content=content, is_error=is_error):
                label = "error" if is_error else "result"
                out.append(
                    f"**Tool {label}** (`{tools.get(cid, 'tool')}`, `{cid}`)\n\n" + fence(content or "(no output)")
                )
            case _:
                out.append(_image(block, blobs, files, dir_name))
    return [o for o in out if o]


def to_markdown(loaded: slog.LoadedSession, tz: str, dir_name: str, blobs: BlobReader) -> Rendered:
    files: dict[str, bytes] = {}
    tools: dict[str, str] = {}
    title = loaded.display_title or "Session"
    _, started = format_time(loaded.header.created_at, tz)
    parts = [f"# {title}", f"Session `{loaded.header.id}`, started {started}, in `{loaded.header.cwd}`."]
    for entry in loaded.entries:
        match entry:
            case slog.MessageEntry(message=message, ts=ts):
                who = "User" if message.role == "user" else "Coder"
                if message.role == "user" and all(isinstance(b, ToolResultBlock) for b in message.content):
                    who = "Tool results"
                body = _blocks(message, tools, blobs, files, dir_name)
                if body:
                    parts.append(f"## {who} · {format_time(ts, tz)[1]}\n\n" + "\n\n".join(body))
            case slog.ShellEntry(command=command, output=output, exit_code=code):
                status = f"exit code {code}" if code is not None else "killed or timed out"
                parts.append(f"## Shell: `{command}` ({status})\n\n" + fence(output or "(no output)"))
            case slog.CompactionEntry(summary=summary):
                parts.append(
                    "---\n\n*The context was compacted here; from now on the model saw:*\n\n"
                    + _quote(summary)
                    + "\n\n---"
                )
            case slog.ClearEntry():
                parts.append("---\n\n*The context was cleared here (`/clear`).*\n\n---")
            case slog.ModelEntry(model=model):
                parts.append(f"*Model: {model}*")
            case _:
                pass
    return Rendered(text="\n\n".join(parts) + "\n", images=files)


def _quote(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.strip().splitlines())


def to_jsonl(loaded: slog.LoadedSession) -> str:
    """The log as JSON lines: its header, then each entry (the raw log, one segment or many)."""
    lines: Iterable[bytes] = [msgspec.json.encode(loaded.header), *(msgspec.json.encode(e) for e in loaded.entries)]
    return "\n".join(line.decode() for line in lines) + "\n"
