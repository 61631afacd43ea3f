"""The one resolver of `@path`, `@path#L10-20` and `@folder/` references (contract section
19): the file, the lines or the listing go to the model with the turn's text.

Where a reference may come from is `References` (`protocol/actions.py`): the user's own
prompt (LSP or ACP), or the body of a command file or skill the user invoked with `/name`
(the workspace's, the user's, a plugin's, the managed layer's, a bundled one). No other
text attaches anything: a code action, an MCP prompt, an agent definition, a skill the
model loads with the `skill` tool carry no `References`, so `@` there is text.

Whatever wrote it, a reference attaches only what the `read` tool could read, through
the same checks, in this order: `resolve_path` (outside the workspace, `..` escapes and
links leading out refused unless `allowOutsideWorkspace`; a command's own skill or plugin
folder outside the workspace is readable as the read tool's `skill_dirs` are), the
policy's decision for a `read` of that path (the user's rules and the workspace's added
ones, matched on the lexical and the real path: a `deny` is obeyed; an `ask` is the
user's yes only when the user typed the reference, a command file's is left for the model
to `read`, which asks), and the reader: the editor's unsaved buffer, else `saferead`
(never a FIFO or a device; binary files left out), an image as an image. A listing is
`list_files` (ignored files left out, as `ls` and `glob` do) less what a rule denies to
`read`. Each attachment is cut at `input.maxAttachmentBytes` with a note saying so.

One syntax wherever it is written: `@` at the start, after whitespace or an opening
bracket; trailing punctuation is tried off (`see @a.py.`); nothing inside a fenced code
block (an ACP client's embedded file, a pasted snippet) is a reference. An `@` that names
nothing stays text, silently: an e-mail address, `@decorator`, a handle, `@server:uri`.
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from coder_ls.agent.grants import Decision
from coder_ls.agent.paths import PathError, display_path, resolve_path, skill_file
from coder_ls.agent.tools.base import ToolError
from coder_ls.agent.tools.readimage import read_image
from coder_ls.engine.agent_api import TurnContext
from coder_ls.engine.attachments import paste_for_model
from coder_ls.engine.filelist import list_files
from coder_ls.engine.host import Host
from coder_ls.protocol.actions import References, RunAgent
from coder_ls.protocol.config import Config
from coder_ls.protocol.events import Notice
from coder_ls.protocol.messages import Block, ImageBlock, TextBlock
from coder_ls.saferead import UnreadableFile, read_line_range

REFERENCE = re.compile(r"(?:(?<=[\s(\[{])|^)@(\S+)")
LINES = re.compile(r"#L(\d+)(?:-L?(\d+))?$")
FENCE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})")
TRAILING = ".,;:!?)]}'\"`"
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


def prose(text: str) -> str:
    """`text` with each fenced code block blanked out (a fence closes on the same character,
    at least as long, as CommonMark says; an unclosed one runs to the end)."""
    out: list[str] = []
    fence = ""
    for line in text.splitlines(keepends=True):
        m = FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip(" \n`~"):
                fence = ""
            out.append("\n" if line.endswith("\n") else "")
        elif m:
            fence = m.group(1)
            out.append("\n" if line.endswith("\n") else "")
        else:
            out.append(line)
    return "".join(out)


def tokens(text: str) -> list[str]:
    """The `@` tokens of `text`, in order, outside fenced code (each still with its
    trailing punctuation: `locate` tries it off)."""
    if "@" not in text:
        return []
    return [m.group(1) for m in REFERENCE.finditer(prose(text))]


@dataclass(frozen=True)
class Found:
    token: str
    path: Path
    lines: tuple[int, int] | None
    is_dir: bool


@dataclass(frozen=True)
class Where:
    """Where a source's references may lead, besides the workspace: the command's own
    folders outside it (readable as the read tool's `skill_dirs`), and whether a rule that
    asks counts as the user's yes (the user typed the reference)."""

    folders: tuple[Path, ...] = ()
    typed: bool = False

    @staticmethod
    def of(refs: References) -> Where:
        return Where(tuple(Path(f) for f in refs.folders), typed=refs.source == "typed")

    def outside(self, root: Path) -> list[Path]:
        real_root = root.resolve()
        return [f for f in self.folders if not f.resolve().is_relative_to(real_root)]


def read_decision(root: Path, config: Config, path: Path, extra: list[Path]) -> Decision:
    """The policy's answer for a `read` of `path` (the user's rules and the workspace's)."""
    from coder_ls.agent.policy import decide  # only for a text that holds a reference

    return decide("read", {"path": str(path)}, config, root=root, skill_dirs=extra)


def judge(root: Path, config: Config, raw: str, where: Where) -> tuple[Path | None, str | None]:
    """(the path `raw` names and may attach, or None; why it may not, or None when it names
    nothing). The read tool's checks, in its order. Blocking: it looks at the disk."""
    extra = where.outside(root)
    bases = [root, *where.folders] if not os.path.isabs(raw) else [root]
    refused: str | None = None
    for base in bases:
        candidate = raw if base == root else str(base / raw)
        try:
            path = resolve_path(root, candidate, allow_outside=config.allow_outside_workspace)
        except PathError as exc:
            inside = skill_file(str(Path(os.path.abspath(base)) / raw), extra) if base != root else None
            if inside is None:
                if refused is None and os.path.lexists(Path(root, candidate)):
                    refused = str(exc)
                continue
            path = inside
        if not path.exists():
            continue
        decision = read_decision(root, config, path, extra)
        if decision.action == "deny":
            return None, decision.reason
        if decision.action == "ask" and not where.typed:
            return None, f"{decision.reason}: a rule asks before it is read (the model may `read` it, which asks you)"
        return path, None
    return None, refused


def locate(root: Path, config: Config, text: str, where: Where | None = None) -> tuple[list[Found], list[str]]:
    """The references of `text` that name something, and notes on the ones refused.
    Blocking (it looks at the disk): run in a worker thread."""
    where = where if where is not None else Where(typed=True)
    found: list[Found] = []
    notes: list[str] = []
    seen: set[str] = set()
    for token in tokens(text):
        for candidate in _candidates(token):
            raw, lines = _split(candidate)
            if candidate in seen or not raw:
                break
            path, why = judge(root, config, raw, where)
            if path is None and why is None:
                continue  # names nothing: stays text
            seen.add(candidate)
            if path is None:
                notes.append(f"@{candidate} was not attached: {why}")
            else:
                found.append(Found(candidate, path, lines, path.is_dir()))
            break
    return found, notes


async def expand_references(
    root: Path, config: Config, host: Host, text: str, where: Where | None = None
) -> Attachments:
    if "@" not in text:
        return Attachments()
    found, notes = await asyncio.to_thread(locate, root, config, text, where)
    out = Attachments(notes=notes)
    for ref in found:
        await _attach(root, config, host, ref, out)
    if "@diagnostics" in text or "@problems" in text or "@#" in text:  # the editor's (section 23)
        from coder_ls.agent.eyes.mentions import attach_editor

        await attach_editor(root, config, host, tokens(text), out)
    return out


def readable(root: Path, config: Config, files: list[str]) -> list[str]:
    """`files` less what a rule denies to `read`."""
    if not any(r.action == "deny" and r.tool in ("read", "*") for r in config.rules):
        return files
    return [f for f in files if read_decision(root, config, root / f, []).action != "deny"]


def _listing(root: Path, config: Config, path: Path) -> tuple[str, list[str]]:
    """(the folder as shown, the files under it that `read` could read): ignored files are
    not listed (`list_files`), and neither is what a rule denies to `read`."""
    rel = display_path(root, path)
    prefix = "" if rel == "." else rel.rstrip("/") + "/"
    under = readable(root, config, [f for f in list_files(root) if f.startswith(prefix)])
    return prefix or "./", [f[len(prefix) :] for f in under]


async def _attach(root: Path, config: Config, host: Host, ref: Found, out: Attachments) -> None:
    path, lines = ref.path, ref.lines
    rel = display_path(root, path)
    limit = config.input.max_attachment_bytes
    if ref.is_dir:
        shown, under = await asyncio.to_thread(_listing, root, config, path)
        listing, cut = _cut("\n".join(under[:MAX_LISTING]), limit)
        note = f"\n[{len(under)} files; the first {MAX_LISTING} shown]" if len(under) > MAX_LISTING or cut else ""
        out.blocks.append(TextBlock(text=f"(Attached: the files under {shown})\n{listing}{note}"))
        out.names.append(f"{shown} ({len(under)} files)")
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


async def attachments(turn: TurnContext, action: RunAgent) -> Attachments:
    """What the turn's references attach (none when its text carries no `References`);
    each refused one is a notice."""
    refs = action.references
    if refs is None:
        return Attachments()
    text = action.prompt if refs.text is None else refs.text
    attached = await expand_references(turn.root, turn.config(), turn.host, text, Where.of(refs))
    for note in attached.notes:
        turn.emit(Notice(message=note))
    return attached


async def prompt_content(turn: TurnContext, action: RunAgent, text: str) -> list[Block]:
    """The user message of a turn: its images, the text, then what its `@` references attach."""
    attached = await attachments(turn, action)
    text = paste_for_model(text, action.pastes)
    return [*action.images, *attached.images, TextBlock(text=text), *attached.blocks]


async def attached_text(turn: TurnContext, action: RunAgent) -> str:
    """The attachments as text after a prompt that goes on as text (`context: fork`: a
    subagent's prompt); an image is named, not sent."""
    attached = await attachments(turn, action)
    parts = [b.text for b in attached.blocks]
    if attached.images:
        parts.append(f"({len(attached.images)} image(s) referenced: read them with the read tool)")
    return "".join(f"\n\n{p}" for p in parts)
