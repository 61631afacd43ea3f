"""The first listing after start-up with many skills (issue 22, benchmarks/README.md
`corpus_first_list`): what the server loads to answer it, and the front matter it keeps
between starts (`commands/frontcache.py`) — which must never change an answer.

What a server loaded is read from `/proc/<pid>/maps` (the shared objects of the C
extensions it imported): no introspection command, the real process as a user runs it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
from harness import init_git, lsp_session, server_process
from test_catalog_cost import install

# C extensions of packages the first listing never needs: the model SDK's (pydantic),
# image input's (Pillow), the shell parser's (tree-sitter), and PyYAML's once every
# front matter was read by an earlier server (the memo answers).
NOT_LOADED = ("pydantic_core", "/PIL/", "tree_sitter", "yaml/_yaml")


def loaded_objects(pid: int) -> set[str]:
    with open(f"/proc/{pid}/maps") as f:
        return {line.split()[-1] for line in f if line.rstrip().endswith(".so") or ".so." in line}


async def listing(root: Path, home: Path) -> tuple[dict[str, dict], set[str], list[str]]:
    async with lsp_session(root, env={"HOME": str(home)}) as s:
        listed = await s.execute("coder.listCommands", {})
        objects = loaded_objects(server_process(s).pid)
        messages = [m.message for m in s.client.messages]
    return {c["name"]: c for c in listed["data"]["commands"]}, objects, messages


async def test_a_second_start_lists_the_same_catalog_without_loading_yaml(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    skills = install(tmp_path / ".xdg-ws", 300)
    (skills / "odd").mkdir()  # front matter that is not YAML: read line by line, and said
    (skills / "odd" / "SKILL.md").write_text("---\ndescription: fix: the colon\nallowed-tools: Read\n---\nBody\n")
    first, _, first_messages = await listing(root, tmp_path)
    second, objects, second_messages = await listing(root, tmp_path)
    assert second == first
    assert first["odd"]["description"] == "fix: the colon"
    assert any("not valid YAML" in m for m in second_messages)  # the problem is still said
    assert sorted(first_messages) == sorted(second_messages)
    assert [o for o in objects if any(n in o for n in NOT_LOADED)] == []

    (skills / "skill-0003" / "SKILL.md").write_text("---\ndescription: changed between starts\n---\nBody\n")
    third, _, _ = await listing(root, tmp_path)
    assert third["skill-0003"]["description"] == "changed between starts"


async def test_a_broken_or_foreign_memo_is_ignored(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    install(tmp_path / ".xdg-ws", 20)
    first, _, _ = await listing(root, tmp_path)
    memo = next((tmp_path / ".xdg-cache-ws" / "coder-ls").glob("frontmatter-*.msgpack"))
    memo.write_bytes(b"\x93not msgpack at all")
    assert (await listing(root, tmp_path))[0] == first
    # written by another reader (another version): its entries are not believed
    data = msgspec.msgpack.decode(memo.read_bytes())
    data["reader"] = "another version"
    for entry in data["entries"].values():
        entry[0]["description"] = "from the other version"
    memo.write_bytes(msgspec.msgpack.encode(data))
    again, _, _ = await listing(root, tmp_path)
    assert again == first and "from the other version" not in json.dumps(again)


async def test_a_workspace_file_with_a_user_files_front_matter_is_still_untrusted(tmp_path):
    """The memo is keyed on the text alone; trust is applied after it, to each file: the
    same front matter in a cloned repository grants nothing before /trust."""
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    front = "---\ndescription: deploy it\nallowed-tools: Bash(./deploy *)\n---\n"
    user = tmp_path / ".xdg-ws" / "coder" / "commands"
    user.mkdir(parents=True)
    (user / "mine.md").write_text(front + "Deploy $ARGUMENTS\n")
    (root / ".claude" / "commands").mkdir(parents=True)
    (root / ".claude" / "commands" / "theirs.md").write_text(front + "Deploy $ARGUMENTS\n")
    for _ in range(2):  # the second start reads both from the memo
        entries, _, messages = await listing(root, tmp_path)
        assert {"mine", "theirs"} <= set(entries)
        assert any("theirs.md" in m and "grant nothing until you trust" in m for m in messages), messages
        assert not any("mine.md" in m for m in messages), messages


_ENGINE_FIRST_LISTING = """
import asyncio, json, os, sys
from pathlib import Path
from coder_ls.wiring import build_engine
from coder_ls.engine.host import NullHost
from coder_ls.protocol.ops import ListCommands, Submission

engine = build_engine(Path(sys.argv[1]), NullHost(), dict(os.environ))


async def main():
    try:
        return await engine.submit(Submission(id="l", session_id=None, op=ListCommands()))
    finally:
        await engine.shutdown()  # as the server does at `shutdown`


result = asyncio.run(main())
print(json.dumps({"entries": len(result.data.commands), "modules": sorted(sys.modules)}))
"""

# Modules the server imports between `initialize` and its first listing only if something
# made them eager again: the model SDKs and MCP's, images, the shell parser and the safety
# check (only `!cmd` needs them), the task runners and checkpoints (only a submission that
# runs something), the ACP edge, and PyYAML once the front matter was read before.
LAZY = (
    "anthropic", "httpx", "pydantic", "mcp", "PIL", "tree_sitter", "acp", "yaml",
    "coder_ls.guard.safety", "coder_ls.guard.shellparse", "coder_ls.engine.tasks",
    "coder_ls.history.checkpoints", "coder_ls.agent.turn", "coder_ls.agent.tools", "coder_ls.acp",
)  # fmt: skip


async def test_the_engine_answers_its_first_listing_without_the_heavy_modules(tmp_path):
    """The engine built as the server builds it, then its first listing, in a fresh
    interpreter: which modules that took (a second run, so the front matter memo is warm)."""
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    install(tmp_path / ".xdg-ws", 200)
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / ".xdg-ws")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env = {k: v for k, v in env.items() if not k.startswith("ANTHROPIC_")}
    for _ in range(2):
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-c", _ENGINE_FIRST_LISTING, str(root)],
            capture_output=True,
            text=True,
            env=env,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["entries"] > 200
    eager = [m for m in out["modules"] if any(m == name or m.startswith(name + ".") for name in LAZY)]
    assert eager == []
