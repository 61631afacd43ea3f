"""A step's patch, applied to the user's workspace: the one way an isolated step's work lands.

A step that ran somewhere else (a git worktree, `isolation/worktrees.py`; a remote worker)
hands back `git diff --binary --full-index` of its tree against the tree it started from.
`apply_patch` puts that change into the workspace as the agent's own edits go:

- **All or nothing.** The patch is first applied in a private scratch copy of the files it
  touches, made from what the user has *now* (an open editor buffer wins over the disk).
  If any hunk does not apply there, nothing is written and every failing file comes back as
  a `Conflict` with both sides: the hunk that did not apply and the current text. A
  conflict is reported, never forced (no fuzz, no 3-way merge, no `--reject` leftovers).
- **The same guards as an edit.** Every path the patch names must stay in the workspace
  (no `..`, no absolute path, no component of it a link leading out, now), must not be a
  protected path (`guard/protected.py`: `.git/`, `.coder/`, `.claude/`, ... and the home's
  list), must not be a symbolic link or a submodule in the result, and must not be a
  symbolic link in the workspace. One refused path refuses the whole patch (`Refusal`),
  before anything is written.
- **The same write path.** Text files go to the editor as one `workspace/applyEdit`
  (`EditRequest`, bounded by the root) when it can apply edits, so open buffers and the
  editor's undo stack get them; otherwise, and for binary files, deletions and mode
  changes, the server writes the disk itself (`fsutil.write_atomic`, never through a link
  out). What is written inside a submission is in that submission's checkpoint, so `/undo`
  reverts it like any edit.

git runs only in the scratch directory, with no user, system or repository configuration
(`GIT_CONFIG_GLOBAL=/dev/null`, `GIT_CONFIG_NOSYSTEM`, a ceiling so it finds no repository),
stdin closed. The patch is data: nothing in it runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Awaitable, Iterable
from pathlib import Path
from typing import Literal, Protocol

import msgspec

from coder_ls.fsutil import UnsafePathError, link_out, open_dir_beneath, write_atomic
from coder_ls.guard.protected import protected_name, protected_reason_for
from coder_ls.history.gitops import GitError, run_git, user_env
from coder_ls.protocol.edits import EditOutcome, EditRequest, FileChange, TextEdit
from coder_ls.saferead import UnreadableFile, read_regular_file

CURRENT_MAX_CHARS = 20_000  # of a conflicting file's current text, in a `Conflict`
HUNK_MAX_CHARS = 20_000  # of the part of the patch that did not apply
MAX_FILE_BYTES = 64 * 1024 * 1024  # a file the patch touches, read from the workspace

Status = Literal["applied", "empty", "conflict", "refused", "failed"]


class Conflict(msgspec.Struct, frozen=True):
    """A file whose part of the patch does not apply to what the user has now."""

    path: str  # relative to the workspace root, with `/`
    reason: str  # git's words ("patch does not apply", "already exists in working directory", ...)
    hunk: str  # the hunk(s) that did not apply (unified diff text; a binary's header only)
    current: str | None  # the file's current text (buffer or disk, cut), None when absent


class Refusal(msgspec.Struct, frozen=True):
    """A path the patch may not write, and why."""

    path: str
    reason: str


class PatchResult(msgspec.Struct, frozen=True):
    """What `apply_patch` did.

    `status`: "applied" (every file written: `applied`), "empty" (the patch changes
    nothing), "conflict" (nothing written; `conflicts` says where), "refused" (nothing
    written; `refused` says which paths break a guard), "failed" (`error`; `applied`
    lists what was written before the failure, which the submission's checkpoint holds).
    `message` says it in words for the model and the user, both sides of each conflict
    included."""

    status: Status
    message: str
    applied: tuple[str, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    refused: tuple[Refusal, ...] = ()
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status in ("applied", "empty")


class EditorCaps(Protocol):
    @property
    def apply_edit(self) -> bool: ...


class EditorBuffer(Protocol):
    @property
    def text(self) -> str: ...

    @property
    def version(self) -> int | None: ...


class Editor(Protocol):
    """What the patch needs of the editor: `engine.host.Host` is one (structurally)."""

    @property
    def caps(self) -> EditorCaps: ...

    def open_document(self, path: Path) -> EditorBuffer | None: ...

    def apply_edit(self, request: EditRequest) -> Awaitable[EditOutcome]: ...


class _File(msgspec.Struct):
    rel: str
    base: bytes | None  # what the workspace holds now (None: absent)
    base_mode: int | None
    version: int | None = None
    from_buffer: bool = False
    result: bytes | None = None
    result_mode: int | None = None


async def apply_patch(patch: bytes, *, root: Path, editor: Editor, label: str) -> PatchResult:
    """Apply a step's `patch` (the output of `git diff --binary --full-index --no-renames`,
    paths `a/…`/`b/…` relative to the workspace root) to the workspace at `root`.

    All or nothing (see the module docstring): a conflict or a refused path writes nothing.
    `editor`: the host (its open buffers are the base; its `workspace/applyEdit` writes the
    text files when it can). `label`: what the edit is called in the editor ("Coder: step
    2"). Never raises for a bad patch or a git failure: the result's `status` says so.
    Callers apply several steps' patches one after another, in the plan's order; a later
    patch that touches what an earlier one changed meets it as the current text."""
    if not root.is_absolute():
        return PatchResult("failed", f"the workspace root {root} is not absolute", error="relative root")
    if not patch.strip():
        return PatchResult("empty", "The step changed nothing.")
    scratch = Path(tempfile.mkdtemp(prefix="coder-patch-"))
    try:
        return await _apply(patch, root, editor, label, scratch)
    except GitError as exc:
        return PatchResult("failed", f"The step's patch could not be read: {exc}", error=str(exc))
    finally:
        await asyncio.to_thread(shutil.rmtree, scratch, True)


async def _apply(patch: bytes, root: Path, editor: Editor, label: str, scratch: Path) -> PatchResult:
    tree = scratch / "tree"
    tree.mkdir()
    patch_file = scratch / "step.patch"
    patch_file.write_bytes(patch)
    paths = await _paths(patch_file, tree)
    if not paths:
        return PatchResult("empty", "The step changed nothing.")
    refused = [Refusal(p, why) for p in paths if (why := _refusal(root, p)) is not None]
    refused += [Refusal(p, why) for p, why in _special(patch).items() if p not in {r.path for r in refused}]
    if refused:
        return _refused(refused)
    files = {p: await asyncio.to_thread(_base, root, p, editor) for p in paths}
    bad = [Refusal(p, f.reason) for p, f in files.items() if isinstance(f, Refusal)]
    if bad:
        return _refused(bad)
    current = {p: f for p, f in files.items() if isinstance(f, _File)}
    await asyncio.to_thread(_seed, tree, current.values())
    check = await _git(tree, "apply", "--check", "--binary", "--whitespace=nowarn", str(patch_file))
    if check.returncode != 0:
        return await _conflicts(patch, patch_file, tree, current, check.stderr)
    done = await _git(tree, "apply", "--binary", "--whitespace=nowarn", str(patch_file))
    if done.returncode != 0:  # --check passed: only a bug or a full disk gets here
        return PatchResult("failed", f"The step's patch failed: {done.stderr.strip()}", error=done.stderr.strip())
    refused = await asyncio.to_thread(_results, tree, current.values())
    if refused:
        return _refused(refused)
    return await _write(root, editor, label, list(current.values()))


async def _git(cwd: Path, *args: str) -> _Run:
    env = user_env()
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", GIT_CEILING_DIRECTORIES=str(cwd.parent))
    env.pop("GIT_CONFIG_PARAMETERS", None)
    run = await run_git(["-c", "core.quotepath=false", *args], cwd=cwd, env=env, check=False)
    return _Run(run.returncode, run.stdout, run.stderr)


class _Run(msgspec.Struct):
    returncode: int
    stdout: bytes
    stderr: str


async def _paths(patch_file: Path, tree: Path) -> list[str]:
    """Every path the patch names (both sides of a rename or copy), in its order."""
    run = await _git(tree, "apply", "--numstat", "-z", str(patch_file))
    if run.returncode != 0:
        raise GitError(run.stderr.strip().splitlines()[-1] if run.stderr.strip() else "not a patch")
    out: list[str] = []
    fields = run.stdout.split(b"\0")
    i = 0
    while i < len(fields):
        head = fields[i]
        if not head:
            i += 1
            continue
        parts = head.split(b"\t", 2)
        if len(parts) == 3 and parts[2]:
            names = [parts[2]]
            i += 1
        else:  # a rename or copy: "added\tdeleted\t" then the two names
            names = [fields[i + 1], fields[i + 2]] if i + 2 < len(fields) else []
            i += 3
        out += [os.fsdecode(n) for n in names if n]
    return list(dict.fromkeys(out))


def _refusal(root: Path, rel: str) -> str | None:
    """Why the patch may not write `rel` (None: it may)."""
    parts = Path(rel).parts
    if not rel or os.path.isabs(rel) or ".." in parts or "." in parts:
        return "the path leaves the workspace"
    if (name := protected_name(parts)) is not None:
        return f"it is inside {name}, a protected path"
    path = root / rel
    why = protected_reason_for(path, root)
    real = Path(os.path.realpath(path))
    why = why or protected_reason_for(real, Path(os.path.realpath(root)))
    if why:
        return f"it is a protected path: {why}"
    out = link_out(root, path)
    if out is not None:
        return f"{os.path.relpath(out, root)} is a link leading out of the workspace"
    if os.path.islink(path):
        return "it is a symbolic link in the workspace (a patch does not write through links)"
    return None


def _base(root: Path, rel: str, editor: Editor) -> _File | Refusal:
    """What the workspace holds at `rel` now: the open buffer, else the disk."""
    path = root / rel
    doc = editor.open_document(path)
    mode: int | None = None
    with contextlib.suppress(OSError):
        mode = os.lstat(path).st_mode
    if doc is not None:
        return _File(rel, doc.text.encode("utf-8"), mode, doc.version, from_buffer=True)
    if mode is not None and not stat.S_ISREG(mode):
        return Refusal(rel, "it is not a regular file in the workspace")
    try:
        data = read_regular_file(path, MAX_FILE_BYTES, follow_symlinks=False)
    except UnreadableFile as exc:
        return Refusal(rel, str(exc))
    return _File(rel, data, mode if data is not None else None)


def _seed(tree: Path, files: Iterable[_File]) -> None:
    for f in files:
        if f.base is None:
            continue
        target = tree / f.rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(f.base)
        os.chmod(target, 0o755 if f.base_mode is not None and f.base_mode & 0o111 else 0o644)


def _results(tree: Path, files: Iterable[_File]) -> list[Refusal]:
    """Read what the patch made of each file in the scratch tree (a link or a folder where a
    file was: refused)."""
    refused = []
    for f in files:
        target = tree / f.rel
        try:
            st = os.lstat(target)
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(st.st_mode):
            refused.append(Refusal(f.rel, "the step made it a symbolic link (not applied from an isolated step)"))
        elif not stat.S_ISREG(st.st_mode):
            refused.append(Refusal(f.rel, "the step made it something other than a regular file (a submodule?)"))
        else:
            f.result = target.read_bytes()
            f.result_mode = st.st_mode
    return refused


_ERROR = re.compile(r"^error: (?:patch failed: )?(.+?)(?::(\d+))?(?:: (.*))?$")


async def _conflicts(patch: bytes, patch_file: Path, tree: Path, files: dict[str, _File], stderr: str) -> PatchResult:
    """Nothing applies: each failing file with the hunks git rejected and its current text."""
    reasons: dict[str, str] = {}
    for line in stderr.splitlines():
        m = _ERROR.match(line.strip())
        if m is None:
            continue
        path = m.group(1)
        for rel in files:
            if path == rel or path.startswith(rel + ":") or line.find(f" {rel}:") >= 0:
                reasons.setdefault(rel, m.group(3) or "patch does not apply")
    await _git(tree, "apply", "--reject", "--binary", "--whitespace=nowarn", str(patch_file))  # for the .rej
    sections = _sections(patch)
    conflicts = []
    for rel, why in reasons.items():
        rej = tree / f"{rel}.rej"
        hunk = rej.read_text("utf-8", "replace") if rej.is_file() else sections.get(rel, "")
        base = files[rel].base
        current = None if base is None else base.decode("utf-8", "replace")[:CURRENT_MAX_CHARS]
        conflicts.append(Conflict(rel, why, hunk[:HUNK_MAX_CHARS], current))
    if not conflicts:
        conflicts.append(Conflict("", stderr.strip() or "the patch does not apply", "", None))
    return PatchResult("conflict", _conflict_message(conflicts), conflicts=tuple(conflicts))


def _sections(patch: bytes) -> dict[str, str]:
    """Each file's part of the patch, by its `b/` path (for a conflict's hunk)."""
    out: dict[str, str] = {}
    for chunk in re.split(rb"(?m)^(?=diff --git )", patch):
        first = chunk.split(b"\n", 1)[0].decode("utf-8", "replace")
        if not first.startswith("diff --git ") or " b/" not in first:
            continue
        out[first.rsplit(" b/", 1)[1]] = chunk.decode("utf-8", "replace")
    return out


_MODES = {
    b"120000": "the step made it a symbolic link (not applied from an isolated step)",
    b"160000": "the step made it a submodule (not applied from an isolated step)",
}


def _special(patch: bytes) -> dict[str, str]:
    """The paths the patch makes a symbolic link or a submodule (from its headers)."""
    out: dict[str, str] = {}
    for chunk in re.split(rb"(?m)^(?=diff --git )", patch):
        first, _, rest = chunk.partition(b"\n")
        if not first.startswith(b"diff --git ") or b" b/" not in first:
            continue
        header = rest.split(b"\n@@", 1)[0]
        for line in header.splitlines():
            if line.startswith((b"new file mode ", b"new mode ")) and line.split()[-1] in _MODES:
                out[os.fsdecode(first.rsplit(b" b/", 1)[1])] = _MODES[line.split()[-1]]
    return out


def _conflict_message(conflicts: Iterable[Conflict]) -> str:
    lines = ["The step's patch was not applied (nothing was written): it conflicts with the workspace."]
    for c in conflicts:
        lines.append(f"\n{c.path or '(patch)'}: {c.reason}")
        if c.hunk:
            lines.append(f"The part of the patch that did not apply:\n{c.hunk.rstrip()}")
        shown = "(the file does not exist)" if c.current is None else c.current.rstrip() or "(empty)"
        lines.append(f"The current text of {c.path}:\n{shown}")
    return "\n".join(lines)


def _refused(refused: list[Refusal]) -> PatchResult:
    lines = ["The step's patch was refused (nothing was written):"]
    lines += [f"- {r.path}: {r.reason}" for r in refused]
    return PatchResult("refused", "\n".join(lines), refused=tuple(refused))


def _text(data: bytes | None) -> str | None:
    if data is None or b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _lines(text: str) -> list[str]:
    """Lines as LSP counts them (only \\n, \\r\\n and \\r end one), ends kept."""
    return _LINE.findall(text)


def whole_edit(old: str, new: str) -> tuple[TextEdit, ...]:
    """One edit turning `old` into `new`: the lines between their common head and tail
    (positions in UTF-16 units, as LSP counts them)."""
    a, b = _lines(old), _lines(new)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    end_line = len(a) - tail
    text = "".join(b[head : len(b) - tail])
    if end_line == len(a) and a and not a[-1].endswith(("\n", "\r")):  # to the end of an unterminated last line
        last = a[-1]
        return (TextEdit(head, 0, end_line - 1, len(last.encode("utf-16-le")) // 2, text),)
    return (TextEdit(head, 0, end_line, 0, text),)


async def _write(root: Path, editor: Editor, label: str, files: list[_File]) -> PatchResult:
    changes: list[FileChange] = []
    disk: list[_File] = []
    for f in files:
        if f.result == f.base and _exec(f.result_mode) == _exec(f.base_mode):
            continue
        new, old = _text(f.result), _text(f.base)
        same_mode = f.base is None or _exec(f.result_mode) == _exec(f.base_mode)
        if editor.caps.apply_edit and new is not None and same_mode and (f.base is None or old is not None):
            path = str(root / f.rel)
            if f.base is None:
                changes.append(FileChange(path=path, kind="create", new_text=new))
            else:
                assert old is not None
                edits = whole_edit(old, new)
                changes.append(FileChange(path, "edit", new, edits, base_version=f.version))
        else:
            disk.append(f)
    written: list[str] = []
    if changes:
        outcome = await editor.apply_edit(EditRequest(label=label, changes=tuple(changes), root=str(root)))
        if not outcome.applied:
            why = outcome.reason or "the editor did not apply it"
            return PatchResult("failed", f"The step's patch was not applied: {why}", error=why)
        written += [Path(c.path).relative_to(root).as_posix() for c in changes]
    for f in disk:
        try:
            await asyncio.to_thread(_disk_write, root, f)
        except OSError as exc:
            why = f"could not write {f.rel}: {exc}"
            done = ", ".join(written) or "nothing"
            msg = f"The step's patch was applied only in part ({done} written): {why}"
            return PatchResult("failed", msg, applied=tuple(written), error=why)
        written.append(f.rel)
    if not written:
        return PatchResult("empty", "The step changed nothing.")
    return PatchResult("applied", f"The step's patch was applied: {', '.join(written)}.", applied=tuple(written))


def _exec(mode: int | None) -> bool:
    return bool(mode is not None and mode & 0o111)


def _disk_write(root: Path, f: _File) -> None:
    path = root / f.rel
    if link_out(root, path) is not None:
        raise UnsafePathError(0, f"{f.rel} leads out of the workspace")
    if f.result is None:
        fd = open_dir_beneath(root, path.parent)
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path.name, dir_fd=fd)
        finally:
            os.close(fd)
        return
    mode = 0o755 if _exec(f.result_mode) else 0o644
    write_atomic(path, f.result, root=root, new_mode=mode & ~_umask())
    if _exec(f.result_mode) != _exec(f.base_mode) and f.base is not None:
        fd = open_dir_beneath(root, path.parent)
        try:
            file_fd = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
        finally:
            os.close(fd)
        try:
            current = stat.S_IMODE(os.fstat(file_fd).st_mode)
            os.fchmod(file_fd, current | (0o111 & ~_umask()) if _exec(f.result_mode) else current & ~0o111)
        finally:
            os.close(file_fd)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
