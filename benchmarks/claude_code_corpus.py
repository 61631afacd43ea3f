"""A corpus of public Claude Code files, installed the way their collections document,
then loaded with the engine's own loaders: load rates per kind (issue 17).

    python benchmarks/claude_code_corpus.py [--mirrors DIR] [--keep DIR] [-v]

The collections are git clones under `--mirrors` (default `/work/.mirror`, as the
project's fetch tool leaves them, `<owner>+<name>/repo`); a missing one is skipped and
said. What each is and how it is installed:

| collection | kind | installed as |
|---|---|---|
| anthropics/claude-code | plugins (marketplace) | `/plugin install <each>@<marketplace>` |
| wshobson/agents | plugins (marketplace) | `/plugin install <each>@<marketplace>` |
| anthropics/skills | skills | `~/.claude/skills/<name>/` |
| wshobson/commands | commands | `~/.claude/commands/{tools,workflows}/` (`/tools:api-scaffold`) |
| VoltAgent/awesome-claude-code-subagents | agents | `~/.claude/agents/<category>/` |
| qdhenry/Claude-Command-Suite | commands, agents | the workspace's `.claude/` |

A file counts as loaded when the catalog (commands, skills) or the agent list has it
under the name Claude Code gives it. Files Claude Code itself does not load are counted
apart (`rejected by Claude Code`): agents with no `name`/`description` front matter, and
documentation beside the commands (`README.md` and the like, no front matter).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from coder_ls.commands import plugins  # noqa: E402
from coder_ls.commands.agentdefs import agent_dirs, load_agents  # noqa: E402
from coder_ls.commands.builtin import register_builtins  # noqa: E402
from coder_ls.commands.files import load_commands, source_dirs, walk_markdown  # noqa: E402
from coder_ls.commands.frontmatter import split  # noqa: E402
from coder_ls.commands.registry import Registry  # noqa: E402

MARKETS = ("anthropics+claude-code", "wshobson+agents")


@dataclass
class Corpus:
    home: Path
    root: Path
    env: dict[str, str]
    sources: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def _export(repo: Path, paths: list[str], target: Path) -> Path:
    """The files of `paths` at the clone's HEAD (a bare mirror has no work tree)."""
    target.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", "HEAD", *paths], capture_output=True, stdin=subprocess.DEVNULL, check=False
    )
    if archive.returncode == 0:
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def build(mirrors: Path, base: Path) -> Corpus:
    home, root = base / "home", base / "ws"
    root.mkdir(parents=True)
    (root / ".git").mkdir()
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    corpus = Corpus(home, root, env)

    def repo(name: str) -> Path | None:
        path = mirrors / name / "repo"
        if not path.exists():
            corpus.missing.append(name)
            return None
        corpus.sources.append(name)
        return path

    for name in MARKETS:
        if (r := repo(name)) is None:
            continue
        market = _export(r, ["plugins", ".claude-plugin"], base / "markets" / name)
        for entry in json.loads((market / ".claude-plugin/marketplace.json").read_text())["plugins"]:
            try:
                plugins.install(env, f"{entry['name']}@{market}")
            except plugins.PluginError as exc:
                print(f"  plugin {entry['name']} ({name}) not installed: {exc}")
    if (r := repo("anthropics+skills")) is not None:
        tree = _export(r, ["skills"], base / "skills-src")
        shutil.copytree(tree / "skills", home / ".claude/skills", symlinks=True)
    if (r := repo("wshobson+commands")) is not None:
        tree = _export(r, ["tools", "workflows"], base / "commands-src")
        for folder in ("tools", "workflows"):
            shutil.copytree(tree / folder, home / ".claude/commands" / folder)
    if (r := repo("VoltAgent+awesome-claude-code-subagents")) is not None:
        tree = _export(r, ["categories"], base / "agents-src")
        shutil.copytree(tree / "categories", home / ".claude/agents")
    if (r := repo("qdhenry+Claude-Command-Suite")) is not None:
        _export(r, [".claude/commands", ".claude/agents"], root)
    return corpus


def _has_front_matter(path: Path) -> bool:
    try:
        raw, _ = split(path.read_text(errors="replace"))
    except Exception:
        return False
    return raw is not None


def _cc_rejects_agent(path: Path) -> bool:
    """Claude Code loads an agent file only with `name` and `description` in front matter."""
    text = path.read_text(errors="replace")
    try:
        raw, _ = split(text)
    except Exception:
        return True
    return raw is None or not any(line.startswith("name:") for line in raw.splitlines()) or "description:" not in raw


def rates(corpus: Corpus, verbose: bool = False) -> dict[str, tuple[int, int, int]]:
    """kind -> (loaded, expected, rejected by Claude Code)."""
    found, _ = plugins.installed(corpus.env)
    dirs = source_dirs(corpus.root, corpus.env, plugins.plugin_sources(found))
    commands, problems = load_commands(dirs, trusted=True)
    registry = Registry()
    register_builtins(registry)
    registry.set_extra(commands)
    by_path = {str(c.path): c for c in commands}
    out: dict[str, tuple[int, int, int]] = {}
    misses: list[str] = []
    for kind, want_skill in (("commands", False), ("skills", True)):
        expected = loaded = rejected = 0
        for d in dirs:
            if d.skill != want_skill or not d.path.is_dir():
                continue
            files = (
                [p / "SKILL.md" for p in sorted(d.path.iterdir()) if (p / "SKILL.md").is_file()]
                if want_skill
                else [p for _, p in walk_markdown(d.path)]
            )
            for path in files:
                if not want_skill and not _has_front_matter(path) and path.stem.upper() == path.stem:
                    rejected += 1  # README.md and the like: documentation
                    continue
                expected += 1
                if str(path) in by_path:
                    loaded += 1
                else:
                    misses.append(f"{kind}: {path}")
        out[kind] = (loaded, expected, rejected)
    agent_folders = agent_dirs(corpus.root, corpus.env)
    defs, agent_problems = load_agents(agent_folders, trusted=True, plugins=plugins.plugin_agent_dirs(found))
    names = {d.name for d in defs}
    expected = loaded = rejected = 0
    folders = [f for f, _ in agent_folders] + [p.path for p in plugins.plugin_agent_dirs(found)]
    clash = ("is your own", "already defined")  # a name clash: one file wins, as in Claude Code
    skipped = {str(p.path) for p in agent_problems if p.skipped and not any(c in p.message for c in clash)}
    shadowed = sum(1 for p in agent_problems if p.skipped and any(c in p.message for c in clash))
    for folder in folders:
        for _, path in walk_markdown(folder):
            if _cc_rejects_agent(path):
                rejected += 1
                continue
            expected += 1
            if str(path) not in skipped:
                loaded += 1
            else:
                misses.append(f"agents: {path}")
    out["agents"] = (loaded, expected, rejected)
    out["agent names"] = (len(names), len(names), 0)
    print(f"  agents shadowed by a same-named one of higher precedence (counted as loaded): {shadowed}")
    print(f"  commands and skills hiding another of the same name: {len(registry.shadowed)}")
    if verbose:
        for miss in misses:
            print("  not loaded:", miss)
        for p in [*problems, *agent_problems]:
            if p.skipped and not any(c in p.message for c in clash):
                print("  skipped:", p.describe())
        warned = Counter(p.message.split(":")[0][:60] for p in [*problems, *agent_problems] if not p.skipped)
        for message, n in warned.most_common(8):
            print(f"  warned x{n}: {message}")
    return out


def default_mirrors() -> Path:
    return Path(os.environ.get("CODER_MIRRORS", "/work/.mirror"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=default_mirrors())
    parser.add_argument("--keep", type=Path, help="build the corpus here and keep it")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="cc-corpus-"))
    try:
        corpus = build(args.mirrors, base)
        missing = f"; missing: {', '.join(corpus.missing)}" if corpus.missing else ""
        print(f"collections: {', '.join(corpus.sources) or 'none'}{missing}")
        ok = True
        for kind, (loaded, expected, rejected) in rates(corpus, args.verbose).items():
            rate = 100.0 * loaded / expected if expected else 100.0
            ok = ok and (rate >= 99.0 or kind == "agent names")
            extra = f"; {rejected} rejected by Claude Code too" if rejected else ""
            print(f"{kind:>12}: {loaded}/{expected} loaded ({rate:.1f}%){extra}")
        return 0 if ok else 1
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
