"""The tasks of the output commands (contract section 19): `/context`, `/cost`, `/export`;
`/shells` (section 22).

`/context` and `/cost` only read: they never wait in the session's line
(their commands are `immediate`). None takes a checkpoint (an export is written under
`.coder/exports/` or where the user said, never a change to undo).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from coder_ls.engine.export import BlobReader, fence, to_jsonl, to_markdown
from coder_ls.engine.frame import TaskContext
from coder_ls.engine.usage import SessionUsage, cost_report
from coder_ls.fsutil import write_atomic
from coder_ls.guard.exportpath import Refused, resolve
from coder_ls.guard.redact import Redactor
from coder_ls.protocol.actions import ExportSession
from coder_ls.protocol.results import ExportData, ShellEntry, ShellsData
from coder_ls.saferead import UnreadableFile, read_regular_file
from coder_ls.store import log as slog
from coder_ls.store.submissions import list_submissions

MAX_IMAGE_BYTES = 32 * 1024 * 1024


@dataclass
class ContextTask:
    """`/context`: the agent counts what its next request would send."""

    title: str = "Counting the context"
    needs_checkpoint: bool = False

    async def run(self, ctx: TaskContext) -> None:
        await ctx.engine.agent.context_report(ctx.engine.turn_context(ctx.sub, ctx.result))


@dataclass
class CostTask:
    """`/cost` (`/usage`): the session's tokens (`engine/usage.py`), priced from the configuration."""

    title: str = ""
    needs_checkpoint: bool = False

    async def run(self, ctx: TaskContext) -> None:
        usage = ctx.session.extension(SessionUsage, SessionUsage)
        ctx.result.reply, ctx.result.data = cost_report(usage, ctx.engine.config.pricing)


@dataclass
class ShellsTask:
    """`/shells`: the agent's background shells in this session (`engine/bgshells.py`)."""

    title: str = ""
    needs_checkpoint: bool = False

    async def run(self, ctx: TaskContext) -> None:
        shells = ctx.session.background_shells()
        entries = [
            ShellEntry(shell_id=s.shell_id, command=s.command, state=s.state, runtime=s.runtime, exit_code=s.exit_code)
            for s in shells
        ]
        lines = [
            f"{s.shell_id}  {s.state}{'' if s.exit_code is None else f' ({s.exit_code})'}  {s.runtime:g} s  {s.command}"
            for s in shells
        ]
        ctx.result.reply = "\n".join(lines) if lines else "No background shells in this session."
        ctx.result.data = ShellsData(shells=entries)


@dataclass
class ExportTask:
    """`/export`: the session's log rendered (`engine/export.py`) and written where
    `guard/exportpath.py` allows, with the one atomic write."""

    action: ExportSession
    title: str = "Exporting the session"
    needs_checkpoint: bool = False

    async def run(self, ctx: TaskContext) -> None:
        b, session, a = ctx.result, ctx.session, self.action
        home = Path(ctx.engine.env.get("HOME") or Path.home())
        target = resolve(ctx.engine.root, session.id, a.path, a.format, origin=ctx.sub.origin, force=a.force,
                         home=home)  # fmt: skip
        if isinstance(target, Refused):
            b.fail(target.code, target.message)
            return
        log = session.log() if session.persisted else None
        if not isinstance(log, slog.SessionLog):
            b.fail(
                "export_unavailable",
                "/export: this session has no log (nothing said yet, or `.coder/` cannot be written).",
            )
            return
        loaded = log.read()
        redactor = Redactor.for_names(ctx.engine.config.secrets.env_names, environ=ctx.engine.env)
        files_dir = target.path.stem + ".files"
        images: dict[str, bytes] = {}
        if a.format == "jsonl":
            text = to_jsonl(loaded)
        else:
            rendered = to_markdown(loaded, ctx.engine.config.timezone, files_dir, self._blob_reader(ctx))
            text, images = rendered.text + await self._changes(ctx, loaded), rendered.images
        data = redactor.text(text).encode()
        try:
            write_atomic(target.path, data, root=target.root)
            for name, blob in images.items():
                write_atomic(target.path.parent / files_dir / name, blob, root=target.root)
        except OSError as exc:
            b.fail("export_failed", f"/export could not write {target.path}: {exc}")
            return
        opened = await ctx.engine.host.show_document(target.path) if not a.path else False
        b.data = ExportData(path=str(target.path), format="jsonl" if a.format == "jsonl" else "md", bytes=len(data),
                            images=[f"{files_dir}/{n}" for n in images], opened=opened)  # fmt: skip
        extra = f" and {len(images)} image(s) in {files_dir}/" if images else ""
        b.reply = f"Exported the session to {target.path}{extra} ({len(data):,} bytes; secrets redacted)."

    @staticmethod
    async def _changes(ctx: TaskContext, loaded: slog.LoadedSession) -> str:
        """What each submission changed in the files, from the undo records (shell side
        effects included): the diffs the messages alone do not show."""
        records = ctx.engine.checkpoints.records()
        parts = []
        for sub in list_submissions(loaded):
            for rec in (r for r in records if r.submission_id == sub.submission_id):
                _, patch = await ctx.engine.checkpoints.record_diff(rec)
                undone = " (since undone)" if rec.undone else ""
                parts.append(f"### Submission {sub.index}: {sub.text}{undone}\n\n{fence(patch, 'diff')}")
        return "\n## Files changed by each submission\n\n" + "\n\n".join(parts) + "\n" if parts else ""

    @staticmethod
    def _blob_reader(ctx: TaskContext) -> BlobReader:
        blobs = Path(ctx.engine.root) / ".coder" / "blobs"

        def read(digest: str) -> bytes | None:
            if not digest.isalnum():
                return None
            try:
                return read_regular_file(blobs / digest, MAX_IMAGE_BYTES)
            except UnreadableFile:
                return None

        return read
