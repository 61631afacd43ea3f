"""Claude Code's own `.claude/` files, unchanged (issue 17): the layouts and spellings of
the public collections load and expand as Claude Code users expect, through a real
client over stdio (`coder.listCommands`, `coder.input` with the scripted provider)."""

from __future__ import annotations

from harness import init_git, lsp_session
from test_command_files import catalog, home_env, scripted, warnings, write


async def test_sub_folders_name_commands_with_a_namespace(tmp_path):
    """`.claude/commands/dev/code-review.md` is `/dev:code-review` (Claude Code's name;
    its docs show the folder as the label "(project:dev)")."""
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    scripted(root)
    write(root / ".claude/commands/dev/code-review.md", "---\ndescription: Review code\n---\nReview $ARGUMENTS")
    write(root / ".claude/commands/dev/git/sync.md", "Sync the branch")
    write(root / ".claude/commands/README.md", "# My commands\n\nA collection.")
    write(root / ".claude/commands/dev/WORKFLOW_EXAMPLES.md", "Examples for people.")
    write(root / ".claude/commands/top.md", "Top level")
    async with lsp_session(root) as s:
        c = await catalog(s)
        assert c["dev:code-review"]["namespace"] == "dev" and c["dev:code-review"]["source"] == "workspace"
        assert c["dev:git:sync"]["namespace"] == "dev:git"
        assert "namespace" not in c["top"]
        assert not {"README", "dev:WORKFLOW_EXAMPLES", "code-review"} & set(c)  # docs are not commands
        result = await s.execute("coder.input", {"text": "/dev:code-review app.py"})
        assert result["status"] == "completed", result
        assert s.events_of("userMessage")[-1]["text"] == "Review app.py"
        assert warnings(s) == []


async def test_skills_are_named_by_their_folder_whatever_name_says(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    home, env = home_env(tmp_path)
    write(home / ".claude/skills/agent-development/SKILL.md", "---\nname: Agent Development\ndescription: A\n---\nA")
    write(root / ".claude/skills/hook-dev/SKILL.md", "---\nname: hook-development\ndescription: H\n---\nH")
    write(root / ".claude/skills/other/SKILL.md", "---\nname: hook-development\ndescription: O\n---\nO")
    async with lsp_session(root, env=env) as s:
        c = await catalog(s)
        assert c["agent-development"]["source"] == "skill"  # `name:` with spaces no longer skips it
        assert {"hook-dev", "other"} <= set(c) and "hook-development" not in c  # no silent collision
        assert warnings(s) == []


async def test_front_matter_that_is_not_yaml_loads_what_it_can(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    outline = "---\ndescription: Plan: step by step\nargument-hint: [goal]\n---\nPLAN"
    write(root / ".claude/commands/outline.md", outline)
    write(root / ".claude/skills/quiet/SKILL.md", "---\ndescription: Q\nuser-invocable: 0\n---\nQ")
    write(root / ".claude/skills/auto/SKILL.md", '---\ndescription: A\ndisable-model-invocation: "true"\n---\nA')
    write(root / ".claude/skills/on/SKILL.md", "---\ndescription: On\ndisable-model-invocation: 1\n---\nOn")
    async with lsp_session(root) as s:
        c = await catalog(s)
        assert c["outline"]["description"] == "Plan: step by step" and c["outline"]["argumentHint"] == "[goal]"
        assert c["quiet"]["userInvocable"] is False
        assert c["auto"]["modelInvocable"] is False and c["on"]["modelInvocable"] is False
        await s.wait_for(lambda: len(warnings(s)) >= 1)
        shown = warnings(s)
        assert len(shown) == 1 and "outline.md" in shown[0] and "YAML" in shown[0] and "skipped" not in shown[0]


async def test_a_skill_beats_a_command_and_a_trusted_workspace_beats_the_user(tmp_path):
    """Claude Code: a skill takes precedence over a command file of the same name. The
    contract (section 18) puts a workspace the user trusted above the user's own files
    (Claude Code puts personal first; an untrusted clone never wins here: see
    tests/security/test_untrusted_commands.py). Every clash is listed and warned once."""
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    scripted(root)
    home, env = home_env(tmp_path)
    cmd = write(root / ".claude/commands/deploy.md", "the command file")
    write(root / ".claude/skills/deploy/SKILL.md", "---\ndescription: Deploy skill\n---\nTHE SKILL")
    ws_fmt = write(root / ".claude/skills/fmt/SKILL.md", "---\ndescription: workspace fmt\n---\nWS")
    mine = write(home / ".claude/skills/fmt/SKILL.md", "---\ndescription: my fmt\n---\nMINE")
    async with lsp_session(root, env=env) as s:
        c = await catalog(s)
        assert c["deploy"]["source"] == "skill" and c["deploy"]["shadows"] == [str(cmd)]
        assert c["fmt"]["description"] == "workspace fmt" and c["fmt"]["shadows"] == [str(mine)]
        await s.execute("coder.input", {"text": "/deploy"})
        assert s.events_of("userMessage")[-1]["text"] == "THE SKILL"
        await s.wait_for(lambda: len(warnings(s)) >= 2)
        await s.execute("coder.listCommands", {})
        shown = warnings(s)
        assert len(shown) == 2, shown
        assert any(str(cmd) in w and "skill" in w for w in shown)
        assert any(str(mine) in w and str(ws_fmt) in w and "takes precedence" in w for w in shown)


async def test_expansion_leaves_what_is_not_a_placeholder_alone(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    scripted(root)
    body = "awk '{print $1}' | cost $5.00 | =$B$6 | local file=\"$1\" | first=$ARGUMENTS[0] second=$ARGUMENTS[1]"
    write(root / ".claude/commands/sheet.md", body)
    write(
        root / ".claude/commands/conventional.md", "Add a `!` after the scope: `feat(api)!` means breaking. !`echo ran`"
    )
    write(root / ".claude/commands/vars.md", "root=${CLAUDE_PROJECT_DIR} id=${CLAUDE_SESSION_ID} x=${UNKNOWN}")
    write(root / ".claude/commands/fenced.md", "Status:\n```!\necho one\necho two\n```\nDone")
    async with lsp_session(root) as s:
        await s.execute("coder.input", {"text": "/sheet"})
        assert s.events_of("userMessage")[-1]["text"] == body  # no argument: every placeholder as written
        await s.execute("coder.input", {"text": "/sheet x"})
        text = s.events_of("userMessage")[-1]["text"]
        assert text.startswith("awk '{print x}' | cost $5.00 | =$B$6 | local file=\"x\" | first=x second=$ARGUMENTS[1]")
        result = await s.execute("coder.input", {"text": "/conventional"})
        assert result["status"] == "completed", result
        assert s.events_of("userMessage")[-1]["text"] == ("Add a `!` after the scope: `feat(api)!` means breaking. ran")
        result = await s.execute("coder.input", {"text": "/vars"})
        session_id = result["sessionId"]
        assert s.events_of("userMessage")[-1]["text"] == f"root={root} id={session_id} x=${{UNKNOWN}}"
        result = await s.execute("coder.input", {"text": "/fenced"})
        assert result["status"] == "completed", result
        assert s.events_of("userMessage")[-1]["text"] == "Status:\none\ntwo\nDone"
