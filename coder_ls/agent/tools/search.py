"""grep, glob and ls. grep uses ripgrep when it is on PATH; otherwise, and for glob,
files come from `git ls-files --cached --others --exclude-standard` (so .gitignore is
honoured) inside a git repository, else from a walk that skips .git, .coder,
node_modules and a few caches.

Every name they list is `wiretext.shown_name`d: a byte that is not UTF-8, or a control
character (a newline), as `\\xNN`, which the file tools take back (`agent/paths.py`)."""

from __future__ import annotations

import asyncio
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import msgspec

from coder_ls.agent.tools.base import Tool, ToolContext, ToolError, ToolOutput
from coder_ls.agent.tools.unsaved import BufferScan, search_buffers, unsaved_in
from coder_ls.engine.filelist import SKIP_DIRS, list_files
from coder_ls.engine.host import OpenDocument
from coder_ls.environ import child_env
from coder_ls.globs import glob_match, name_or_path_match
from coder_ls.protocol.wiretext import shown_name
from coder_ls.saferead import UnreadableFile, read_regular_file

MAX_LINE_CHARS = 300
MAX_GREP_FILE_BYTES = 32 * 1024 * 1024  # the fallback grep skips larger files (ripgrep streams them)
FindRg = Callable[[], "str | None"]
ListFiles = Callable[[Path], list[str]]


def _find_rg() -> str | None:
    return shutil.which("rg")


def _under(files: list[str], base: str) -> list[str]:
    if base in ("", "."):
        return files
    prefix = base.rstrip("/") + "/"
    return [f for f in files if f == base or f.startswith(prefix)]


def _glob_filter(rel: str, pattern: str) -> bool:
    # Like ripgrep: a glob without "/" matches the file name anywhere.
    return name_or_path_match(pattern, rel)


def _cap(lines: list[str], limit: int, what: str) -> str:
    if len(lines) <= limit:
        return "\n".join(lines)
    return "\n".join(lines[:limit]) + f"\n... {len(lines) - limit} more {what} not shown; narrow the search."


Match = tuple[str, int, str]  # path, line number, line text


def format_matches(matches: list[Match], limit: int) -> str:
    """grep's output, grouped by file like `rg --heading` (the path once, then its
    `line:text` rows): never longer than `path:line:text` on every row, and shorter as
    soon as a file has two matches."""
    out: list[str] = []
    current = None
    for path, number, text in matches[:limit]:
        if path != current:
            out.append(shown_name(path))
            current = path
        out.append(f"{number}:{text}")
    if len(matches) > limit:  # the Python search stops at limit + 1: no exact count
        out.append(f"... more than {limit} matches, the rest not shown; narrow the search.")
    return "\n".join(out)


class GrepInput(msgspec.Struct, rename="camel", forbid_unknown_fields=True, frozen=True):
    """Search file contents with a regular expression."""

    pattern: Annotated[str, msgspec.Meta(min_length=1, description="Regular expression")]
    path: Annotated[str, msgspec.Meta(description="File or directory to search")] | None = None
    glob: Annotated[str, msgspec.Meta(description="Only files matching this glob, e.g. *.py")] | None = None
    ignore_case: bool = False


def _read_inside(path: Path, real_root: Path) -> bytes | None:
    """The file's bytes, unless its real location is outside the workspace, it is not a
    regular file (a FIFO, a device: `saferead`) or it is over MAX_GREP_FILE_BYTES (None)."""
    if not path.resolve().is_relative_to(real_root):
        raise PermissionError(f"{path} leads outside the workspace")
    try:
        return read_regular_file(path, MAX_GREP_FILE_BYTES)
    except UnreadableFile:
        return None


def _python_grep(root: Path, files: list[str], inp: GrepInput, limit: int) -> list[Match]:
    flags = re.IGNORECASE if inp.ignore_case else 0
    try:
        regex = re.compile(inp.pattern, flags)
    except re.error as exc:
        raise ToolError(f"invalid regular expression {inp.pattern!r}: {exc}") from exc
    out: list[Match] = []
    real_root = root.resolve()
    for rel in files:
        if inp.glob and not _glob_filter(rel, inp.glob):
            continue
        try:
            data = _read_inside(root / rel, real_root)
        except OSError:
            continue
        if data is None or b"\x00" in data[:8192]:
            continue
        for n, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
            if regex.search(line):
                out.append((rel, n, line[:MAX_LINE_CHARS]))
                if len(out) > limit:
                    return out
    return out


async def _rg_grep(rg: str, root: Path, rel_base: str, inp: GrepInput) -> list[Match]:
    args = [rg, "--line-number", "--no-heading", "--with-filename", "--null", "--color", "never"]
    args += ["--hidden", "--sort", "path"]
    for d in sorted(SKIP_DIRS):
        args += ["--glob", f"!{d}"]
    if inp.ignore_case:
        args.append("--ignore-case")
    if inp.glob:
        args += ["--glob", inp.glob]
    args += ["-e", inp.pattern, "--"]
    # Always an explicit path: with none, rg searches its stdin (the LSP pipe) and hangs.
    args.append(rel_base if rel_base not in ("", ".") else ".")
    proc = await asyncio.create_subprocess_exec(
        *args,
        cwd=root,
        env=child_env(),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        stdout, stderr = await asyncio.wait_for(proc.communicate(), timeout=60)
    except BaseException:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        raise
    if proc.returncode == 2 and not stdout:
        raise ToolError(f"grep failed: {stderr.decode('utf-8', errors='replace').strip()}")
    return rg_matches(stdout)


def rg_matches(stdout: bytes) -> list[Match]:
    """ripgrep's `--null` output (`path NUL line:text LF` each): the path is read up to its
    NUL, so a name with a newline or a colon stays whole, and kept as `os.fsdecode` would
    (a byte that is not UTF-8, surrogate-escaped); a line's text is decoded leniently."""
    matches: list[Match] = []
    pos = 0
    while (cut := stdout.find(b"\0", pos)) >= 0:
        end = stdout.find(b"\n", cut)
        end = len(stdout) if end < 0 else end
        name = stdout[pos:cut].decode("utf-8", errors="surrogateescape").removeprefix("./")
        num, _, text = stdout[cut + 1 : end].partition(b":")
        if num.isdigit():
            matches.append((name, int(num), text.decode("utf-8", errors="replace")[:MAX_LINE_CHARS]))
        pos = end + 1
    return matches


async def _ignored(root: Path, rels: list[str]) -> set[str]:
    """Which of `rels` git ignores (grep skips them on disk: so in a buffer too). Outside a
    git work tree, none."""
    from coder_ls.history.gitops import GitError, run_git

    try:
        run = await run_git(["check-ignore", "--", *rels], cwd=root, check=False)
    except GitError:
        return set()
    return set(run.text.splitlines()) if run.returncode == 0 else set()


async def _scan_buffers(ctx: ToolContext, base: Path, inp: GrepInput, limit: int) -> BufferScan | None:
    """The unsaved editor buffers grep would search as files (in its scope, its glob, not in a
    skipped or ignored folder, not leading out of the workspace), searched in place of their
    files (`agent/tools/unsaved.py`); None when there is none."""
    root = ctx.root
    candidates: list[tuple[Path, str]] = []
    for path in ctx.host.open_paths():
        if not (path == base or path.is_relative_to(base)) or not path.is_relative_to(root):
            continue
        rel = path.relative_to(root).as_posix()
        if any(part in SKIP_DIRS for part in rel.split("/")[:-1]):
            continue
        if inp.glob and not _glob_filter(rel, inp.glob):
            continue
        candidates.append((path, rel))
    if not candidates:
        return None
    real_root = root.resolve()

    def find() -> list[tuple[str, OpenDocument]]:
        found = unsaved_in(ctx.host, candidates)
        return [(rel, doc) for rel, doc in found if (root / rel).resolve().is_relative_to(real_root)]

    found = await asyncio.to_thread(find)
    if not found:
        return None
    ignored = await _ignored(root, [rel for rel, _ in found])
    found = [(rel, doc) for rel, doc in found if rel not in ignored]
    if not found:
        return None
    try:
        regex = re.compile(inp.pattern, re.IGNORECASE if inp.ignore_case else 0)
    except re.error as exc:
        raise ToolError(f"invalid regular expression {inp.pattern!r} for the unsaved editor buffers: {exc}") from exc
    return await asyncio.to_thread(
        search_buffers, found, regex, limit=limit, max_chars=MAX_LINE_CHARS, max_bytes=MAX_GREP_FILE_BYTES
    )


def make_grep_tool(
    find_rg: FindRg = _find_rg, files: ListFiles = list_files, max_results: int = 200
) -> Tool[GrepInput]:
    async def run(ctx: ToolContext, inp: GrepInput) -> ToolOutput:
        base = ctx.resolve_read(inp.path or ".")
        if not base.exists():
            raise ToolError(f"not found: {ctx.rel(base)}")
        rel_base = ctx.rel(base)
        rg = find_rg()
        if rg:
            matches = await _rg_grep(rg, ctx.root, rel_base, inp)
        else:
            listed = await asyncio.to_thread(files, ctx.root)
            scope = _under(listed, rel_base)
            matches = await asyncio.to_thread(_python_grep, ctx.root, scope, inp, max_results)
        scan = await _scan_buffers(ctx, base, inp, max_results)
        note, unsaved = "", False
        if scan is not None:
            matches, note, unsaved = scan.merge(matches), scan.note(), scan.unsaved
        # the note last: a client reads grep's first line (`No matches`) and its `path` / `n:text` rows
        if not matches:
            return ToolOutput(f"No matches for {inp.pattern!r}.\n{note}".rstrip("\n"), unsaved=unsaved)
        return ToolOutput(f"{format_matches(matches, max_results)}\n{note}".rstrip("\n"), unsaved=unsaved)

    return Tool(
        "grep",
        "Search file contents with a regular expression (files ignored by .gitignore are "
        "skipped). Output: each file's path, then its matches as `line:text`.",
        GrepInput,
        run,
    )


class GlobInput(msgspec.Struct, rename="camel", forbid_unknown_fields=True, frozen=True):
    """Find files by name pattern."""

    pattern: Annotated[str, msgspec.Meta(min_length=1, description="Glob, e.g. **/*.py or src/*.ts")]
    path: Annotated[str, msgspec.Meta(description="Directory the pattern is relative to")] | None = None


def make_glob_tool(files: ListFiles = list_files, max_results: int = 500) -> Tool[GlobInput]:
    async def run(ctx: ToolContext, inp: GlobInput) -> ToolOutput:
        base = ctx.resolve_read(inp.path or ".")
        rel_base = ctx.rel(base)
        listed = _under(await asyncio.to_thread(files, ctx.root), rel_base)
        cut = 0 if rel_base in ("", ".") else len(rel_base.rstrip("/")) + 1
        found = [f for f in listed if glob_match(inp.pattern, f[cut:])]
        note = ""
        if not found and "/" not in inp.pattern:
            found = [f for f in listed if glob_match("**/" + inp.pattern, f[cut:])]
            note = f"(no match at the top level; showing matches of **/{inp.pattern})\n" if found else ""
        if not found:
            return ToolOutput(f"No files match {inp.pattern!r}.")
        return ToolOutput(note + _cap([shown_name(f) for f in sorted(found)], max_results, "files"))

    return Tool(
        "glob",
        "List files matching a glob (`**/*.py`, `src/**/*.{ts,tsx}`), sorted, relative to "
        "the workspace root; files ignored by .gitignore are skipped.",
        GlobInput,
        run,
    )


class LsInput(msgspec.Struct, rename="camel", forbid_unknown_fields=True, frozen=True):
    """List a directory."""

    path: Annotated[str, msgspec.Meta(description="Directory (default: the workspace root)")] = "."


def make_ls_tool(max_entries: int = 1000) -> Tool[LsInput]:
    async def run(ctx: ToolContext, inp: LsInput) -> ToolOutput:
        path = ctx.resolve_read(inp.path or ".")
        rel = ctx.rel(path)
        if not path.exists():
            raise ToolError(f"not found: {rel}")
        if not path.is_dir():
            raise ToolError(f"{rel} is a file, not a directory; use read to see it")
        entries = []
        for child in sorted(path.iterdir(), key=lambda p: p.name):
            if child.name == ".git":
                continue
            entries.append(shown_name(child.name) + ("/" if child.is_dir() else ""))
        if not entries:
            return ToolOutput(f"{rel}: (empty directory)")
        return ToolOutput(_cap(entries, max_entries, "entries"))

    return Tool("ls", "List a directory: one entry per line, directories end with `/`.", LsInput, run)
