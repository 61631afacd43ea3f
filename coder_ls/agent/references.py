"""`@path`, `@path#L10-20` and `@folder/` in a user's prompt: the file, the lines or the
listing go to the model with the prompt (contract section 19).

The checks are the `read` tool's, not a second set: `resolve_path` (outside the workspace
is refused unless `allowOutsideWorkspace`) and the policy's decision for a `read` of that
path (a `deny` rule is obeyed; the user typed the reference, so an `ask` is their yes).
Text comes from the editor's unsaved buffer when the file is open, else through
`saferead` (never a FIFO or a device); an image file is attached as an image; a listing
is `list_files` (ignored files left out, as `ls` and `glob` do). Each attachment is cut
at `input.maxAttachmentBytes` with a note saying so.

An `@` that names nothing stays text, silently: an e-mail address, `@decorator`, a
handle, and `@server:uri` (an MCP resource: a hook left for that, an unknown one is text).
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from pathlib import Path

from coder_ls.agent.paths import PathError, display_path, resolve_path
from coder_ls.agent.tools.base import ToolError
from coder_ls.agent.tools.readimage import read_image
from coder_ls.engine.agent_api import TurnContext
from coder_ls.engine.attachments import paste_for_model
from coder_ls.engine.filelist import list_files
from coder_ls.engine.host import Host
from coder_ls.protocol.actions import RunAgent
from coder_ls.protocol.config import Config
from coder_ls.protocol.events import Notice
from coder_ls.protocol.messages import Block, ImageBlock, TextBlock
from coder_ls.saferead import UnreadableFile, read_line_range

REFERENCE = re.compile(r"(?:(?<=\s)|^)@(\S+)")
LINES = re.compile(r"#L(\d+)(?:-L?(\d+))?$")
TRAILING = ".,;:!?)]}'\""
MAX_SCAN_BYTES = 256 * 1024 * 1024  # as far as a range is looked for (the read tool's limit)
MAX_LISTING = 500


@dataclass
class Attachments:
    blocks: list[TextBlock] = field(default_factory=list)
    images: list[ImageBlock] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # references that were not attached, and why
    names: list[str] = field(default_factory=list)  # what was attached, for the transcript


def _candidates(token: str) -> list[str]:
    """The token, then the token without trailing punctuation (`see @a.py.`)."""
    out = [token]
    while token and token[-1] in TRAILING:
        token = token[:-1]
        out.append(token)
    return [t for t in out if t]


def _split(token: str) -> tuple[str, tuple[int, int] | None]:
    m = LINES.search(token)
    if m is None:
        return token, None
    first = int(m.group(1))
    last = int(m.group(2)) if m.group(2) else first
    return token[: m.start()], (max(1, min(first, last)), max(first, last))


def _cut(text: str, limit: int) -> tuple[str, bool]:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text, False
    return data[:limit].decode("utf-8", errors="ignore"), True


@dataclass(frozen=True)
class Found:
    token: str
    path: Path
    lines: tuple[int, int] | None
    is_dir: bool


def locate(root: Path, config: Config, prompt: str) -> tuple[list[Found], list[str]]:
    """The references of `prompt` that name something, and notes on the ones refused.
    Blocking (it looks at the disk): run in a worker thread."""
    found: list[Found] = []
    notes: list[str] = []
    seen: set[str] = set()
    for m in REFERENCE.finditer(prompt):
        for token in _candidates(m.group(1)):
            raw, lines = _split(token)
            if token in seen or not raw:
                break
            try:
                path = resolve_path(root, raw, allow_outside=config.allow_outside_workspace)
            except PathError as exc:
                if Path(root, raw).exists():
                    notes.append(f"@{token} was not attached: {exc}")
                    seen.add(token)
                    break
                continue
            if not path.exists():
                continue  # names nothing: stays text
            seen.add(token)
            from coder_ls.agent.policy import decide  # only for a prompt that names a file

            decision = decide("read", {"path": raw}, config, root=root)
            if decision.action == "deny":
                notes.append(f"@{token} was not attached: {decision.reason}")
            else:
                found.append(Found(token, path, lines, path.is_dir()))
            break
    return found, notes


async def expand_references(root: Path, config: Config, host: Host, prompt: str) -> Attachments:
    if "@" not in prompt:
        return Attachments()
    found, notes = await asyncio.to_thread(locate, root, config, prompt)
    out = Attachments(notes=notes)
    for ref in found:
        await _attach(root, config, host, ref, out)
    return out


async def _attach(root: Path, config: Config, host: Host, ref: Found, out: Attachments) -> None:
    path, lines = ref.path, ref.lines
    rel = display_path(root, path)
    limit = config.input.max_attachment_bytes
    if ref.is_dir:
        files = await asyncio.to_thread(list_files, root)
        prefix = "" if rel == "." else rel.rstrip("/") + "/"
        under = [f[len(prefix) :] for f in files if f.startswith(prefix)]
        listing, cut = _cut("\n".join(under[:MAX_LISTING]), limit)
        note = f"\n[{len(under)} files; the first {MAX_LISTING} shown]" if len(under) > MAX_LISTING or cut else ""
        out.blocks.append(TextBlock(text=f"(Attached: the files under {prefix or './'})\n{listing}{note}"))
        out.names.append(f"{prefix or './'} ({len(under)} files)")
        return
    doc = host.open_document(path)
    if doc is not None:  # the editor's unsaved text, not the disk
        text = doc.text if lines is None else "\n".join(doc.text.splitlines()[lines[0] - 1 : lines[1]])
        body, cut = _cut(text, limit)
    else:
        try:
            image = None if lines else await asyncio.to_thread(read_image, root, rel, path)
            if image is not None:
                out.images.extend(image.images)
                out.names.append(rel)
                return
            read = await asyncio.to_thread(_read, path, lines, limit)
        except (ToolError, UnreadableFile) as exc:
            out.notes.append(f"@{rel} was not attached: {exc}")
            return
        if read is None:
            out.notes.append(f"@{rel} was not attached: a binary file")
            return
        body, cut = read
    where = f"{rel} lines {lines[0]}-{lines[1]}" if lines else rel
    note = f"\n[cut at {limit} bytes (input.maxAttachmentBytes): read the file for the rest]" if cut else ""
    out.blocks.append(TextBlock(text=f"(Attached: {where})\n```\n{body}\n```{note}"))
    out.names.append(where)


def _read(path: Path, lines: tuple[int, int] | None, limit: int) -> tuple[str, bool] | None:
    """(the file's text or the lines, cut at `limit` bytes; whether it was cut), or None
    for a binary file. Streamed: a large file is read no further than needed."""
    first, count = (lines[0], lines[1] - lines[0] + 1) if lines else (1, 10**9)
    got = read_line_range(path, first, count, max_scan_bytes=MAX_SCAN_BYTES if lines else limit + 1)
    if got is None:
        raise UnreadableFile("no such file")
    if got.binary:
        return None
    text, cut = _cut("\n".join(line.decode("utf-8", errors="replace") for line in got.lines), limit)
    return text, cut or (lines is None and got.size > limit)


async def prompt_content(turn: TurnContext, action: RunAgent, text: str) -> list[Block]:
    """The user message of a turn: its images, the text, then what its `@` references
    attach (a user's prompt only: `action.references`); a refused reference is a notice."""
    attached = Attachments()
    if action.references:
        attached = await expand_references(turn.root, turn.config(), turn.host, action.prompt)
    for note in attached.notes:
        turn.emit(Notice(message=note))
    text = paste_for_model(text, action.pastes)
    return [*action.images, *attached.images, TextBlock(text=text), *attached.blocks]
