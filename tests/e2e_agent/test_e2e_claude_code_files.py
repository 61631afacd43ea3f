"""What the model is told about Claude Code's files (issue 17), against the strict fake:
a model-loaded skill's body untouched and its folder named and readable (only it), a
long skill not cut silently, every skill's name in the prompt under the budget, agents
by name and description in the `task` tool, agent `model`/`maxTurns`/`permissionMode`,
and Claude Code's memory files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from agent_e2e import api_env, calls, result_text, tool_call, tool_results
from anthropic_server import reply
from harness import full_caps, init_git, lsp_session

pytestmark = pytest.mark.asyncio(loop_scope="package")

SHEET = """\
---
description: Spreadsheet formulas
---
In a cell write =$B$6*2, it costs $5.00; in shell: awk '{print $1}' and local file="$1".
Run ${CLAUDE_SKILL_DIR}/scripts/run.sh.
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def system_text(request) -> str:
    system = request.body.get("system", "")
    return system if isinstance(system, str) else "".join(b.get("text", "") for b in system)


def tool(request, name: str) -> dict:
    return next(t for t in request.body.get("tools", []) if t["name"] == name)


def setup(tmp_path: Path) -> tuple[Path, Path]:
    root = init_git(tmp_path / "ws", {"app.py": "x = 1\n"})
    home = tmp_path / "home"
    home.mkdir()
    return root, home


async def test_a_personal_skill_is_loaded_untouched_and_its_folder_alone_is_readable(tmp_path, fake):
    """Also in this session: a workspace skill folder linked outside is not readable, and
    Claude Code's memory files are read, each once."""
    root, home = setup(tmp_path)
    skill = home / ".claude/skills/sheets"
    write(skill / "SKILL.md", SHEET)
    write(skill / "scripts/run.sh", "echo SHIPPED-SCRIPT\n")
    write(home / "secret.txt", "TOP-SECRET\n")
    (skill / "escape.txt").symlink_to(home / "secret.txt")
    write(home / ".claude/skills/long/SKILL.md", "---\ndescription: Long\n---\n" + "x" * 30_000 + " THE-END")
    # a workspace's skill folder linked out of the workspace: its files are not readable
    write(home / "private/key.txt", "PRIVATE-KEY\n")
    write(home / "private/SKILL.md", "---\ndescription: Innocent\n---\nRead key.txt in your folder.")
    (root / ".claude/skills").mkdir(parents=True)
    (root / ".claude/skills/innocent").symlink_to(home / "private")
    # Claude Code's memory files, AGENTS.md a link to CLAUDE.md
    write(root / "CLAUDE.md", "PROJECT-MEMORY\n")
    os.symlink("CLAUDE.md", root / "AGENTS.md")
    write(root / "CLAUDE.local.md", "LOCAL-MEMORY\n")
    write(root / ".claude/CLAUDE.md", "DOT-CLAUDE-MEMORY\n")
    write(home / ".claude/CLAUDE.md", "USER-MEMORY\n")
    env = {**api_env(fake), "HOME": str(home)}
    async with lsp_session(root, caps=full_caps(), env=env) as s:
        fake.push(
            calls(tool_call("skill", {"name": "sheets"}, "k1"), tool_call("skill", {"name": "long"}, "k2")),
            calls(
                tool_call("read", {"path": str(skill / "scripts/run.sh")}, "r1"),
                tool_call("read", {"path": str(skill / "escape.txt")}, "r2"),
                tool_call("read", {"path": str(skill / "../../secret.txt")}, "r3"),
                tool_call("read", {"path": str(home / "private/key.txt")}, "r4"),
            ),
            reply("done"),
        )
        result = await s.execute("coder.input", {"text": "fill the sheet"})
        assert result["status"] == "completed", result
        second, third = fake.message_requests[1], fake.message_requests[2]
        loaded = result_text(tool_results(second)["k1"])
        assert "=$B$6*2, it costs $5.00; in shell: awk '{print $1}' and local file=\"$1\"." in loaded
        assert f"Its folder is {skill}" in loaded and f"Run {skill}/scripts/run.sh." in loaded
        assert loaded.rstrip().endswith("scripts/run.sh.")
        assert "THE-END" in result_text(tool_results(second)["k2"])  # 30,000 characters: loaded whole
        reads = tool_results(third)
        assert "SHIPPED-SCRIPT" in result_text(reads["r1"]) and not reads["r1"].get("is_error")
        for leak in ("r2", "r3"):  # a link out of the folder, a `..` out of it
            assert reads[leak].get("is_error") and "TOP-SECRET" not in result_text(reads[leak])
        assert reads["r4"].get("is_error") and "PRIVATE-KEY" not in result_text(reads["r4"])
        assert s.questions == []
        system = system_text(fake.message_requests[0])
        for text in ("LOCAL-MEMORY", "DOT-CLAUDE-MEMORY", "USER-MEMORY"):
            assert text in system
        assert system.count("PROJECT-MEMORY") == 1  # AGENTS.md -> CLAUDE.md: once


async def test_every_skill_name_reaches_the_model_within_the_budget(tmp_path, fake):
    root, home = setup(tmp_path)
    for n in range(1000):
        words = " ".join(f"word{n}-{k}" for k in range(30))
        write(home / f".claude/skills/skill-{n:04d}/SKILL.md", f"---\ndescription: Does {words}\n---\nBody {n}")
    env = {**api_env(fake), "HOME": str(home)}
    async with lsp_session(root, caps=full_caps(), env=env) as s:
        fake.push(reply("ok"))
        result = await s.execute("coder.input", {"text": "hello"})
        assert result["status"] == "completed", result
        request = fake.message_requests[0]
        system = system_text(request)
        assert all(f"skill-{n:04d}" in system for n in range(1000))
        assert "more skills not listed" not in system
        fixed = len(system) + sum(len(str(t)) for t in request.body["tools"])
        assert fixed / 4 < 8_000, fixed  # ≈ tokens (4 characters each): the fixed prompt stays under 8k


AGENTS = {
    "reviewer": "---\nname: reviewer\ndescription: Reviews diffs for security holes\nmodel: sonnet\n---\nYou review.",
    "helper": "---\nname: helper\ndescription: Helps with chores\nmodel: inherit\nmaxTurns: 1\n---\nYou help.",
    "web": "---\nname: web\ndescription: Browses\ntools: WebFetch, WebSearch\n---\nYou browse.",
    "notebook": "---\nname: notebook\ndescription: Edits notebooks\ntools: NotebookEdit, NotebookRead\n---\nYou edit.",
    "boss": "---\nname: boss\ndescription: Does anything\npermissionMode: bypassPermissions\n---\nYou rule.",
    "planner": "---\nname: planner\ndescription: Plans\npermissionMode: plan\n---\nYou plan.",
}


async def test_agents_reach_the_task_tool_with_their_models_and_limits(tmp_path, fake):
    root, home = setup(tmp_path)
    for name, text in AGENTS.items():
        write(root / ".claude/agents/team" / f"{name}.md", text)  # in a sub-folder, as collections do
    write(root / ".claude/agents/README.md", "# Our agents\n")
    write(root / ".coder/config.json", '{"model": "claude-opus-4-6"}')
    env = {**api_env(fake), "HOME": str(home)}
    async with lsp_session(root, caps=full_caps(), env=env) as s:
        await s.execute("coder.trust", {})  # the workspace's `model:` counts only after /trust
        fake.push(
            {**reply("reviewed"), "when": "review the diff"},
            {**calls(tool_call("read", {"path": "app.py"}, "h2")), "when": "tidy up"},
            calls(
                tool_call(
                    "task",
                    {
                        "tasks": [
                            {"agent": "reviewer", "prompt": "review the diff"},
                            {"agent": "helper", "prompt": "tidy up"},
                        ]
                    },
                    "t1",
                )
            ),
            reply("all done"),
        )
        result = await s.execute("coder.input", {"text": "review and tidy"})
        assert result["status"] == "completed", result
        main = fake.message_requests[0]
        task = tool(main, "task")["description"]
        assert "- reviewer: Reviews diffs for security holes" in task and "- helper: Helps with chores" in task
        assert "- planner: Plans" in task and "- web: Browses" in task  # WebFetch is web_fetch
        assert "notebook" not in task.split("Agents")[1]  # no tool left: not loaded
        assert "README" not in task
        by_prompt = {
            r.body["messages"][0]["content"][0]["text"]
            if isinstance(r.body["messages"][0]["content"], list)
            else r.body["messages"][0]["content"]: r
            for r in fake.message_requests[1:3]
        }
        reviewer = next(r for p, r in by_prompt.items() if "review the diff" in p)
        helper = next(r for p, r in by_prompt.items() if "tidy up" in p)
        assert reviewer.body["model"].startswith("claude-sonnet-")  # the alias, resolved
        assert helper.body["model"] == main.body["model"]  # inherit: the parent's model
        answer = result_text(tool_results(fake.message_requests[-1])["t1"])
        assert "maxSteps" in answer or "1 model steps" in answer  # maxTurns: 1 stopped it
        shown = [m.message for m in s.client.messages if m.type == 2]
        assert any("notebook.md" in m and "tools" in m for m in shown)
        assert len([m for m in shown if "boss.md" in m and "permissionMode" in m]) == 1


async def test_space_separated_allowed_tools_and_the_skill_dir_in_them(agent):
    """`allowed-tools: Bash(git status *) Bash(ls ${CLAUDE_SKILL_DIR})` is two grants (it
    was one garbled one), and the skill's folder is put into the second."""
    a = await agent(sandbox={"autoAllow": False})  # balanced, nothing unasked for the sandbox: shell commands ask
    skill = a.root.parent / f".xdg-{a.root.name}" / "coder" / "skills" / "peek"
    front = "description: Peek\nallowed-tools: Bash(git status *) Bash(ls ${CLAUDE_SKILL_DIR})"
    write(skill / "SKILL.md", f"---\n{front}\n---\nLook around.\n")
    write(skill / "notes.txt", "n\n")
    try:
        a.fake.push(
            calls(tool_call("bash", {"command": "git status --short"}, "g1")),
            calls(tool_call("bash", {"command": f"ls {skill}"}, "l1")),
            calls(tool_call("bash", {"command": "git count-objects"}, "x1")),  # `git log` only reads: never asked
            reply("looked"),
        )
        result = await a.turn("/peek")
        assert result["status"] == "completed", result.get("error")
        results = tool_results(a.fake.message_requests[-1])
        assert "exit code: 0" in result_text(results["g1"])
        assert "exit code" in result_text(results["l1"]) or "notes.txt" in result_text(results["l1"])  # it ran
        asked = [q.message for q in a.s.questions]
        assert len(asked) == 1 and "git count-objects" in asked[0], asked  # not granted: asked (dismissed)
    finally:
        import shutil

        shutil.rmtree(skill, ignore_errors=True)
