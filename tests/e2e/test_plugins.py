"""Claude Code plugins as a command source (issue 17), through a real client: `/plugin`
adds a local marketplace, installs from it or from a local git repository (no network),
disables and enables; plugin commands, skills and agents are namespaced by the plugin's
name, `${CLAUDE_PLUGIN_ROOT}` is its folder, and what a marketplace may not do is refused
with a clear error. With a fetched copy of anthropics/claude-code (its licence keeps it
out of this repository: `CODER_CLAUDE_CODE_REPO` or the benchmark's mirror), Anthropic's
own plugins install and run."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from harness import init_git, lsp_session
from test_command_files import catalog, home_env, scripted, warnings, write

CLAUDE_CODE = Path(os.environ.get("CODER_CLAUDE_CODE_REPO", "/work/.mirror/anthropics+claude-code/repo"))


def plugin(folder: Path, name: str) -> Path:
    write(folder / ".claude-plugin/plugin.json", json.dumps({"name": name, "version": "1.2.0"}))
    write(folder / "commands/hello.md", "---\ndescription: Say hello\n---\nRun ${CLAUDE_PLUGIN_ROOT}/bin/hi $ARGUMENTS")
    write(folder / "commands/git/sync.md", "Sync")
    write(folder / "skills/style/SKILL.md", "---\ndescription: House style\n---\nStyle from ${CLAUDE_SKILL_DIR}")
    write(
        folder / "agents/checker.md", "---\nname: checker\ndescription: Checks things\ntools: Read, Grep\n---\nCheck."
    )
    return folder


def git_repo(folder: Path) -> Path:
    for cmd in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "p"]):
        subprocess.run(["git", *cmd], cwd=folder, check=True, stdin=subprocess.DEVNULL)
    return folder


def extract_plugins(repo: Path, target: Path) -> Path:
    """The marketplace of a clone of anthropics/claude-code (its plugins/ and manifest)."""
    target.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", "HEAD", "plugins", ".claude-plugin"],
        capture_output=True,
        check=True,
        stdin=subprocess.DEVNULL,
    )
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def marketplace(folder: Path, entries: list[dict]) -> Path:
    write(folder / ".claude-plugin/marketplace.json", json.dumps({"name": "team-market", "plugins": entries}))
    return folder


async def test_install_from_a_local_marketplace_then_disable_and_enable(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    scripted(root)
    _, env = home_env(tmp_path)
    market = marketplace(tmp_path / "market", [{"name": "demo", "source": "./plugins/demo"}])
    plugin(market / "plugins/demo", "demo")
    async with lsp_session(root, env=env) as s:
        added = await s.execute("coder.input", {"text": f"/plugin marketplace add {market}"})
        assert added["status"] == "completed", added
        assert added["data"]["marketplaces"] == {"team-market": str(market.resolve())}
        before = len(s.events_of("commandsChanged"))
        result = await s.execute("coder.input", {"text": "/plugin install demo@team-market"})
        assert result["status"] == "completed", result
        assert len(s.events_of("commandsChanged")) > before
        [info] = result["data"]["plugins"]
        assert (info["name"], info["enabled"], info["version"]) == ("demo", True, "1.2.0")
        assert sorted(info["commands"]) == ["demo:git:sync", "demo:hello", "demo:style"]
        installed = Path(info["path"])
        assert installed.parent == tmp_path / ".xdg-ws/coder/plugins"  # a copy in the user's plugin folder
        c = await catalog(s)
        assert (c["demo:hello"]["source"], c["demo:hello"]["namespace"]) == ("plugin", "demo")
        assert c["demo:style"]["source"] == "skill" and c["demo:git:sync"]["namespace"] == "demo:git"
        await s.execute("coder.input", {"text": "/demo:hello world"})
        assert s.events_of("userMessage")[-1]["text"] == f"Run {installed}/bin/hi world"
        agents = await s.execute("coder.input", {"text": "/agents"})
        assert any(a["name"] == "demo:checker" and a["source"] == "plugin" for a in agents["data"]["agents"])
        off = await s.execute("coder.input", {"text": "/plugin disable demo"})
        assert off["data"]["plugins"][0]["enabled"] is False
        assert not any(n.startswith("demo:") for n in await catalog(s))
        await s.execute("coder.input", {"text": "/plugin enable demo"})
        assert "demo:hello" in await catalog(s)
        listing = await s.execute("coder.input", {"text": "/plugin"})
        assert "demo 1.2.0 (enabled)" in listing["reply"]
        assert warnings(s) == []


async def test_install_from_a_local_git_repository(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    _, env = home_env(tmp_path)
    repo = git_repo(plugin(tmp_path / "repo", "gitdemo"))
    async with lsp_session(root, env=env) as s:
        result = await s.execute("coder.input", {"text": f"/plugin install {repo}"})
        assert result["status"] == "completed", result
        path = Path(result["data"]["plugins"][0]["path"])
        assert not (path / ".git").exists() and (path / "commands/hello.md").is_file()
        assert "gitdemo:hello" in await catalog(s)


async def test_what_a_marketplace_may_not_do_is_refused_clearly(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    _, env = home_env(tmp_path)
    write(tmp_path / "outside/.claude-plugin/plugin.json", '{"name": "outside"}')
    market = marketplace(
        tmp_path / "market",
        [
            {"name": "escape", "source": "../outside"},
            {"name": "remote", "source": {"source": "github", "repo": "someone/plugin"}},
            {"name": "ok", "source": "./ok"},
        ],
    )
    write(market / "ok/.claude-plugin/plugin.json", '{"name": "../../evil"}')
    async with lsp_session(root, env=env) as s:
        cases = {
            f"/plugin install escape@{market}": "leaves the marketplace",
            f"/plugin install remote@{market}": "only sources inside the marketplace",
            f"/plugin install nope@{market}": "has no plugin 'nope' (it has: escape, remote, ok)",
            f"/plugin install ok@{market}": "'name' must be a plugin name",
            f"/plugin install {tmp_path / 'missing'}": "neither a folder nor a git repository",
        }
        for text, message in cases.items():
            result = await s.execute("coder.input", {"text": text})
            assert result["status"] == "failed" and result["error"]["code"] == "plugin_failed", result
            assert message in result["error"]["message"], result["error"]
        ghost = await s.execute("coder.input", {"text": "/plugin enable ghost"})
        assert ghost["error"]["code"] == "not_found"
        usage = await s.execute("coder.input", {"text": "/plugin frobnicate"})
        assert usage["error"]["code"] == "invalid_argument" and "usage" in usage["error"]["message"]
        assert not (tmp_path / ".xdg-ws/coder/plugins/outside").exists()
        assert not (tmp_path / "evil").exists() and not any(n.startswith("ok:") for n in await catalog(s))


@pytest.mark.skipif(
    not (CLAUDE_CODE / ".git").exists() and not CLAUDE_CODE.is_dir(), reason="no copy of anthropics/claude-code"
)
async def test_anthropics_own_plugins_install_and_run(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    scripted(root)
    _, env = home_env(tmp_path)
    market = extract_plugins(CLAUDE_CODE, tmp_path / "claude-code")
    names = [p["name"] for p in json.loads((market / ".claude-plugin/marketplace.json").read_text())["plugins"]]
    async with lsp_session(root, env=env) as s:
        for name in names:
            result = await s.execute("coder.input", {"text": f"/plugin install {name}@{market}"})
            assert result["status"] == "completed", result
        c = await catalog(s)
        for command in ("code-review:code-review", "commit-commands:commit", "feature-dev:feature-dev"):
            assert command in c, sorted(c)
        assert "plugin-dev:skill-development" in c  # a plugin with no plugin.json: the entry is its manifest
        agents = {a["name"] for a in (await s.execute("coder.input", {"text": "/agents"}))["data"]["agents"]}
        assert {"feature-dev:code-explorer", "pr-review-toolkit:code-simplifier"} <= agents
        result = await s.execute("coder.input", {"text": "/commit-commands:commit"})
        assert result["status"] == "completed", result
        sent = s.events_of("userMessage")[-1]["text"]
        assert "Current branch: main" in sent or "Current branch: master" in sent
        assert not any("was skipped" in w for w in warnings(s)), warnings(s)
