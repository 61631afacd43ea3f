"""Prompt commands and skills defined in markdown files (contract section 10).

- the user's: `~/.config/coder/commands/**.md`, `~/.claude/commands/**.md`, then the
  skills `~/.config/coder/skills/name/SKILL.md`, `~/.claude/skills/name/SKILL.md`;
- the installed plugins' `commands/**.md` and `skills/name/SKILL.md` (`plugins.py`);
- the workspace's: `<root>/.coder/commands/**.md`, `<root>/.claude/commands/**.md`, then
  `<root>/.coder/skills/name/SKILL.md`, `<root>/.claude/skills/name/SKILL.md`.

Names follow Claude Code: a command file's name is its path under the folder, sub-folders
joined with `:` (`dev/code-review.md` is `/dev:code-review`, namespace `dev`); a skill's
is its folder's (`name:` is only its display name); a plugin's are prefixed with the
plugin's name (`/commit-commands:commit`). Which file a name means is the registry's one
precedence order (`registry.py`); this module only finds and reads candidates.
A markdown file with no front matter whose name is in capitals (`README.md`,
`WORKFLOW_EXAMPLES.md`) is documentation, not a command.

The workspace's files come with a clone: what they may do is the gate's (`guard/trust.py`,
row `commands`): they never replace a built-in or the user's own command, and until
`/trust` their `allowed-tools` grant nothing and their `` !`cmd` `` lines wait for the
user's approval. Optional front matter (`frontmatter.py`, read leniently as Claude Code does):

    ---
    description: Review the staged changes
    argument-hint: [focus]
    ---
    Review `git diff --cached`. Focus on $ARGUMENTS.

`/name args` becomes an agent turn with the body expanded (`expand.py`). A file that
cannot be used is skipped and reported as a `LoadProblem` (the caller warns once).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, NamedTuple

import msgspec

from coder_ls.commands.allowed import parse_allowed_tools
from coder_ls.commands.context import CommandContext
from coder_ls.commands.expand import ExpandVars, expand_arguments
from coder_ls.commands.frontmatter import CommandMeta, FrontMatterError, MetaReader, parse_lenient
from coder_ls.commands.registry import Command, Handler, Layer
from coder_ls.guard.trust import Origin, acts_as_user
from coder_ls.protocol.actions import CommandOutcome, References, RunPromptCommand, ToolGrant
from coder_ls.saferead import UnreadableFile, read_regular_file
from coder_ls.userdirs import config_dir

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
_DOC_NAME = re.compile(r"^[A-Z0-9][A-Z0-9_.-]*$")  # README, CHANGELOG, WORKFLOW_EXAMPLES
MAX_COMMAND_FILE = 256 * 1024
SKILL_FILE = "SKILL.md"
MAX_DEPTH = 6  # sub-folder levels scanned under a commands folder


class SourceDir(NamedTuple):
    path: Path
    source: Literal["workspace", "user", "plugin", "managed", "bundled"]  # its layer in the precedence order
    skill: bool  # folders of `<name>/SKILL.md` (else `**/<name>.md` files)
    plugin: str = ""  # a plugin's name: the namespace of everything it defines
    plugin_root: Path | None = None


class LoadProblem(NamedTuple):
    path: Path
    message: str
    skipped: bool = True  # else the file loaded, without what the message names

    def describe(self) -> str:
        if not self.skipped:
            return f"Command file {self.path}: {self.message}"
        return f"Command file {self.path} was skipped: {self.message}"


def source_dirs(root: Path, env: Mapping[str, str], plugins: list[SourceDir] | None = None) -> list[SourceDir]:
    home = Path(env.get("HOME", os.path.expanduser("~")))
    config = config_dir(env)
    return [  # the order of discovery, which breaks ties inside a layer (.coder/ before .claude/)
        SourceDir(config / "commands", "user", False),
        SourceDir(home / ".claude" / "commands", "user", False),
        SourceDir(config / "skills", "user", True),
        SourceDir(home / ".claude" / "skills", "user", True),
        *(plugins or []),
        SourceDir(root / ".coder" / "commands", "workspace", False),
        SourceDir(root / ".claude" / "commands", "workspace", False),
        SourceDir(root / ".coder" / "skills", "workspace", True),
        SourceDir(root / ".claude" / "skills", "workspace", True),
    ]


def _handler(
    name: str,
    meta: CommandMeta,
    body: str,
    variables: ExpandVars,
    grants: tuple[ToolGrant, ...] = (),
    confirm: Path | None = None,
) -> Handler:
    async def run(ctx: CommandContext, args: str) -> CommandOutcome:
        if not meta.user_invocable:
            return CommandOutcome(
                error=f"/{name} is a skill for the agent only (user-invocable: false).",
                error_code="not_user_invocable",
            )
        here = variables._replace(session_id=ctx.session_id, project_dir=ctx.root)
        expanded = expand_arguments(body, args.strip(), here, meta.arguments)
        # The body's own `@path` references (not the arguments': those are the user's text),
        # attached by the agent's one resolver under the `read` tool's rules.
        folders = tuple(str(p) for p in (variables.skill_dir, variables.plugin_root) if p is not None)
        references = References("command", here.apply(body), folders) if "@" in body else None
        fork = (meta.agent or "general") if meta.context == "fork" else None
        action = RunPromptCommand(
            prompt=expanded.text,
            commands=expanded.commands,
            model=meta.model or None,
            grants=grants,
            fork=fork,
            name=name,
            confirm_commands=str(confirm) if confirm is not None else None,
            hooks=meta.hooks if confirm is None else {},  # a workspace file's hooks wait for /trust
            hooks_source=str(variables.skill_dir or name),
            effort=meta.effort or None,
            references=references,
        )
        return CommandOutcome(actions=[action])

    return run


Listing = tuple[list[str], list[Path]]  # a folder's sub-folder names and `.md` files


def _listing(path: str, listings: dict[str, tuple[int, Listing]] | None) -> Listing:
    """A folder's sub-folders and markdown files, from `listings` while the folder's mtime
    is unchanged (one stat instead of a listing: a large corpus is walked on every request)."""
    try:
        stamp = os.stat(path).st_mtime_ns
    except OSError:
        return [], []
    hit = listings.get(path) if listings is not None else None
    if hit is not None and hit[0] == stamp:
        return hit[1]
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError:
        return [], []
    subs = [e.name for e in entries if not e.name.startswith(".") and e.is_dir(follow_symlinks=False)]
    files = [
        Path(e.path) for e in entries if not e.name.startswith(".") and e.name.endswith(".md") and e.name not in subs
    ]
    if listings is not None:
        listings[path] = (stamp, (subs, files))
    return subs, files


def walk_markdown(
    folder: Path, listings: dict[str, tuple[int, Listing]] | None = None
) -> list[tuple[tuple[str, ...], Path]]:
    """(sub-folders, file) of every `.md` file under `folder`, sorted, at most MAX_DEPTH
    deep; symlinked folders are not followed (a loop, or a way out of the tree)."""
    out: list[tuple[tuple[str, ...], Path]] = []

    def walk(path: str, parts: tuple[str, ...]) -> None:
        subs, files = _listing(path, listings)
        names = {f.name: f for f in files}
        for name in sorted({*subs, *names}):
            if name in names:
                out.append((parts, names[name]))
            elif name in subs and len(parts) < MAX_DEPTH:
                walk(os.path.join(path, name), (*parts, name))

    walk(str(folder), ())
    return out


Stamp = tuple[str, int, int]  # (file, size, mtime): what `signature` compares


SkillFiles = dict[str, tuple[list[str], list[tuple[str, str, Path]]]]  # folder -> (its listing, files)


def _skill_files(
    folder: str, prefix: tuple[str, ...], listings: dict[str, tuple[int, Listing]] | None, known: SkillFiles | None
) -> list[tuple[str, str, Path]]:
    """(name, file, its Path) of each sub-folder's SKILL.md, whether there or not, kept in
    `known` while the folder's listing is (its Paths made once: pathlib is slow to build many)."""
    subs, _ = _listing(folder, listings)
    hit = known.get(folder) if known is not None else None
    if hit is not None and hit[0] is subs:
        return hit[1]
    base = folder if folder.endswith(os.sep) else folder + os.sep
    files = [(":".join((*prefix, n)), f, Path(f)) for n in subs for f in (f"{base}{n}{os.sep}{SKILL_FILE}",)]
    if known is not None:
        known[folder] = (subs, files)
    return files


def _candidates(
    d: SourceDir,
    listings: dict[str, tuple[int, Listing]] | None = None,
    stamps: list[Stamp] | None = None,
    known: SkillFiles | None = None,
) -> list[tuple[str, str, Path]]:
    """(name, namespace, file) of one source folder, sorted; `stamps`: a skill's stamp is
    added there from the one stat that found it (a second stat per skill was half a
    1,000-skill listing's refresh)."""
    prefix = (d.plugin,) if d.plugin else ()
    if d.skill:
        out = []
        for name, file, path in _skill_files(str(d.path), prefix, listings, known):
            try:
                st = os.stat(file)
            except OSError:
                st = None
            if st is not None and stamps is not None:
                stamps.append((file, st.st_size, st.st_mtime_ns))
            if st is not None or os.path.lexists(file):  # a broken link is a candidate: its reading says why
                out.append((name, d.plugin, path))
        return out
    return [
        (":".join((*prefix, *parts, path.stem)), ":".join((*prefix, *parts)), path)
        for parts, path in walk_markdown(d.path, listings)
    ]


def read_text(path: Path) -> str:
    try:
        data = read_regular_file(path, MAX_COMMAND_FILE)
    except UnreadableFile as exc:
        raise FrontMatterError(str(exc)) from None
    except OSError as exc:
        raise FrontMatterError(f"cannot read: {exc.strerror}") from None
    return (data or b"").decode("utf-8", errors="replace")


Parsed = tuple[CommandMeta, str, list[str], bool]  # meta, body, problems, had front matter
Loaded = tuple[Parsed, Command | None, list[LoadProblem]]  # a file's command, from that parse


class ParseCache:
    """Parsed files by (path, mtime, size): a changed file is parsed again, the rest not."""

    def __init__(self, reader: MetaReader | None = None) -> None:
        self.reader = reader  # front matter's text -> metadata (a memo kept between starts: frontcache.py)
        self._entries: dict[str, tuple[tuple[int, int], Parsed]] = {}
        self.listings: dict[str, tuple[int, Listing]] = {}  # folder -> (mtime, its listing)
        self.skill_files: SkillFiles = {}
        # (folder, name, namespace, file, trusted) -> (the parse it was built from, command, problems)
        self.commands: dict[tuple[SourceDir, str, str, str, bool], Loaded] = {}

    def parse(self, path: Path, known: tuple[int, int] | None = None) -> Parsed:
        """`known`: the file's (mtime, size) from a stat just made (`scan_signed`)."""
        if known is not None:
            stamp = known
        else:
            try:
                st = os.stat(path)
                stamp = (st.st_mtime_ns, st.st_size)
            except OSError:
                stamp = (-1, -1)
        hit = self._entries.get(str(path))
        if hit is not None and hit[0] == stamp and stamp != (-1, -1):
            return hit[1]
        text = read_text(path)
        meta, body, problems = parse_lenient(text, self.reader)
        parsed = (meta, body, problems, text.lstrip("\ufeff").startswith("---"))
        self._entries[str(path)] = (stamp, parsed)
        return parsed

    def keep_only(self, paths: set[str]) -> None:
        for key in [k for k in self._entries if k not in paths]:
            del self._entries[key]
        for ckey in [k for k in self.commands if k[3] not in paths]:
            del self.commands[ckey]


def is_documentation(path: Path, has_front_matter: bool) -> bool:
    """`README.md` and the like beside command or agent files: text for people."""
    return not has_front_matter and _DOC_NAME.match(path.stem) is not None


Scan = list[tuple[SourceDir, list[tuple[str, str, Path]]]]


def scan(dirs: list[SourceDir], cache: ParseCache | None = None) -> Scan:
    """Every source folder's candidates (one walk, for `signature` and `load_commands`);
    with `cache`, an unchanged folder costs one stat."""
    listings = cache.listings if cache is not None else None
    return [(d, _candidates(d, listings)) for d in dirs]


def load_commands(
    dirs: list[SourceDir],
    *,
    trusted: bool = False,
    cache: ParseCache | None = None,
    found_files: Scan | None = None,
    stamps: tuple[Stamp, ...] = (),
) -> tuple[list[Command], list[LoadProblem]]:
    """Every candidate command of every source folder (the registry ranks them) and the
    files that were skipped or loaded without something. `trusted`: the user ran `/trust`;
    `found_files`: the folders' `scan` when the caller has it, `stamps` its signature (the
    files' stats, not made again). With `cache`, an unchanged
    file gives back the same `Command` as before (one changed file among 1,000 builds one)."""
    cache = cache if cache is not None else ParseCache()
    found: list[Command] = []
    problems: list[LoadProblem] = []
    seen: set[str] = set()
    known = {file: (mtime, size) for file, size, mtime in stamps}
    for d, candidates in found_files if found_files is not None else scan(dirs):
        for name, namespace, path in candidates:
            seen.add(str(path))
            try:
                parsed = cache.parse(path, known.get(str(path)))
            except FrontMatterError as exc:
                problems.append(LoadProblem(path, str(exc)))
                continue
            key = (d, name, namespace, str(path), trusted)
            hit = cache.commands.get(key)
            if hit is None or hit[0] is not parsed:
                hit = cache.commands[key] = (parsed, *_load_one(d, name, namespace, path, parsed, trusted))
            if hit[1] is not None:
                found.append(hit[1])
            problems += hit[2]
    cache.keep_only(seen)
    return found, problems


def _load_one(
    d: SourceDir, name: str, namespace: str, path: Path, parsed: Parsed, trusted: bool
) -> tuple[Command | None, list[LoadProblem]]:
    """One candidate file's command (None: not one) and what to warn about it."""
    meta, body, meta_problems, fenced = parsed
    origin: Origin = "workspace" if d.source == "workspace" else "user"
    layer: Layer = d.source
    problems: list[LoadProblem] = []
    if not d.skill and is_documentation(path, fenced):
        return None, problems
    problems += [LoadProblem(path, p, skipped=False) for p in meta_problems]
    if not _NAME.match(name):
        problems.append(LoadProblem(path, f"{name!r} is not a valid command name"))
        return None, problems
    if not body:
        return None, problems
    skill_dir = path.parent if d.skill else None
    grants: tuple[ToolGrant, ...] = ()
    as_user = acts_as_user(origin, trusted)
    variables = ExpandVars(skill_dir=skill_dir, plugin_root=d.plugin_root)
    if as_user:
        tools = tuple(variables.apply(t) for t in meta.allowed_tools)
        grants, grant_problems = parse_allowed_tools(tools)
        problems += [LoadProblem(path, p, skipped=False) for p in grant_problems]
    else:
        if meta.allowed_tools:
            message = "allowed-tools grant nothing until you trust this workspace with /trust"
            problems.append(LoadProblem(path, message, skipped=False))
        if meta.hooks:
            message = "its hooks run only after you trust this workspace with /trust"
            problems.append(LoadProblem(path, message, skipped=False))
        if meta.model:  # the repo does not choose what the user pays for
            message = f"model {meta.model!r} is ignored until you trust this workspace with /trust"
            problems.append(LoadProblem(path, message, skipped=False))
            meta = msgspec.structs.replace(meta, model="")
    command = Command(
        name=name,
        description=meta.description or body.split("\n", 1)[0][:80],
        argument_hint=meta.argument_hint,
        handler=_handler(name, meta, body, variables, grants, confirm=None if as_user else path),
        kind="agent" if meta.context == "fork" else "prompt",
        source=d.source if d.source in ("managed", "bundled") else "skill" if d.skill else d.source,
        path=path,
        meta=meta,
        body=body,
        skill_dir=skill_dir,
        origin=origin,
        layer=layer,
        namespace=namespace,
        plugin_root=d.plugin_root,
        untrusted=not as_user,
    )
    return command, problems


def scan_signed(dirs: list[SourceDir], cache: ParseCache) -> tuple[Scan, tuple[Stamp, ...]]:
    """`scan` and `signature` together, with one stat per file (what each request pays)."""
    listings = cache.listings
    found: Scan = []
    stamps: list[Stamp] = []
    for d in dirs:
        candidates = _candidates(d, listings, stamps, cache.skill_files)
        found.append((d, candidates))
        if d.skill:
            continue
        for _, _, target in candidates:
            try:
                st = os.stat(target)
            except OSError:
                continue
            stamps.append((str(target), st.st_size, st.st_mtime_ns))
    return found, tuple(stamps)  # in the scan's order, which is sorted (`_listing`)


def signature(dirs: list[SourceDir] | Scan) -> tuple[tuple[str, int, int], ...]:
    """Cheap fingerprint of the command and skill files (path, size, mtime) to notice changes."""
    out: list[tuple[str, int, int]] = []
    scanned: Scan = [(x, _candidates(x)) if isinstance(x, SourceDir) else x for x in dirs]
    for _, candidates in scanned:
        for _, _, target in candidates:
            try:
                st = os.stat(target)
            except OSError:
                continue
            out.append((str(target), st.st_size, st.st_mtime_ns))
    return tuple(sorted(out))
