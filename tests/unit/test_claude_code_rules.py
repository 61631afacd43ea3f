"""Claude Code's rules piece by piece (issue 17): the registry's one precedence order
tried as an attacker, allowed-tools spellings, expansion edge cases, lenient front
matter. The e2e tests (tests/e2e/test_claude_code_files.py) cover them through the server."""

from __future__ import annotations

from pathlib import Path

from coder_ls.commands.allowed import parse_allowed_tools
from coder_ls.commands.expand import ExpandVars, expand_arguments
from coder_ls.commands.frontmatter import CommandMeta, parse_lenient, split_tools
from coder_ls.commands.registry import Command, Registry
from coder_ls.protocol.actions import CommandOutcome, ToolGrant


async def _run(ctx, args) -> CommandOutcome:  # pragma: no cover - never called
    return CommandOutcome()


def cmd(name: str, layer: str, *, skill: bool = False, kind: str = "prompt", trusted: bool = False) -> Command:
    return Command(
        name, f"{layer} {name}", "", _run, kind=kind, source="skill" if skill else "user",
        path=Path(f"/{layer}/{name}{'/SKILL.md' if skill else '.md'}"), layer=layer,  # type: ignore[arg-type]
        skill_dir=Path(f"/{layer}/{name}") if skill else None,
        untrusted=layer == "workspace" and not trusted,
    )  # fmt: skip


def registry() -> Registry:
    r = Registry()
    r.add_builtin(Command("help", "List", "", _run))
    r.add_builtin(Command("review", "Review", "", _run, kind="prompt"))
    return r


def test_one_order_whatever_order_the_sources_come_in():
    r = registry()
    candidates = [
        cmd("deploy", "workspace", skill=True),
        cmd("deploy", "user"),
        cmd("deploy", "plugin"),
        cmd("fmt", "workspace"),
        cmd("fmt", "workspace", skill=True),
        cmd("help", "user", skill=True),  # never replaces a local built-in
        cmd("review", "workspace"),  # a workspace never replaces a built-in
        cmd("demo:hello", "workspace"),  # .claude/commands/demo/hello.md vs the plugin's
        cmd("demo:hello", "plugin"),
    ]
    for order in (candidates, candidates[::-1]):
        r.set_extra(list(order))
        assert r.get("deploy").layer == "user"  # type: ignore[union-attr]
        assert r.get("fmt").is_skill  # type: ignore[union-attr]  # a skill beats a command of its layer
        assert r.get("help").layer == "builtin" and r.get("review").layer == "builtin"  # type: ignore[union-attr]
        assert r.get("demo:hello").layer == "workspace"  # type: ignore[union-attr]  # above plugins (section 18)
        catalog = {c.name: c for c in r.catalog()}
        assert catalog["deploy"].shadows == ["/workspace/deploy/SKILL.md", "/plugin/deploy.md"]
        assert catalog["help"].shadows == ["/user/help/SKILL.md"]
        assert len(r.shadowed) == 6
    r.set_extra([cmd("review", "user")])  # the user's own may replace a built-in prompt command
    assert r.get("review").layer == "user"  # type: ignore[union-attr]
    assert r.catalog()[1].shadows == ["the built-in /review"]


def test_the_contracts_order_trust_decides_workspace_against_user():
    """Section 18: managed > built-in local > workspace > user > plugin > bundled > MCP,
    the workspace above the user only once trusted (a clone never hides the user's own)."""
    r = registry()
    r.set_extra([cmd("deploy", "user"), cmd("deploy", "workspace", trusted=True)])
    assert r.get("deploy").layer == "workspace"  # type: ignore[union-attr]
    r.set_extra([cmd("deploy", "workspace", trusted=False), cmd("deploy", "user")])
    assert r.get("deploy").layer == "user"  # type: ignore[union-attr]
    r.set_extra([cmd("verify", "bundled", skill=True), cmd("verify", "user", skill=True)])
    assert r.get("verify").layer == "user"  # type: ignore[union-attr]  # a user's own beats what we ship
    r.set_extra([cmd("verify", "bundled", skill=True), cmd("verify", "plugin", skill=True)])
    assert r.get("verify").layer == "plugin"  # type: ignore[union-attr]
    r.set_extra([cmd("help", "managed"), cmd("help", "user"), cmd("review", "workspace", trusted=True)])
    assert r.get("help").layer == "managed"  # type: ignore[union-attr]  # the administrator's, first of all
    assert r.get("review").layer == "builtin"  # type: ignore[union-attr]  # a workspace never replaces a built-in


def test_allowed_tools_spellings():
    assert split_tools("Bash(git add *) Bash(git commit *)") == ("Bash(git add *)", "Bash(git commit *)")
    assert split_tools("Read, Grep Glob") == ("Read", "Grep", "Glob")
    assert split_tools("Bash(npm run test -- --watch=false), Read") == ("Bash(npm run test -- --watch=false)", "Read")
    grants, problems = parse_allowed_tools(("Bash(git add *)", "Task", "Skill", "NotebookEdit"))
    assert grants == (ToolGrant(tool="bash", command="git add", exact=False),)
    assert problems == ["allowed-tools: 'NotebookEdit' is not a tool this agent has (skipped)"]
    variables = ExpandVars(skill_dir=Path("/s"), plugin_root=Path("/p"))
    assert variables.apply("Bash(${CLAUDE_SKILL_DIR}/run.sh:*)") == "Bash(/s/run.sh:*)"
    assert variables.apply("${CLAUDE_PLUGIN_ROOT} ${CLAUDE_SESSION_ID}") == "/p ${CLAUDE_SESSION_ID}"


def test_expansion_edges():
    body = "a=$1 b=$ARGUMENTS[1] all=$ARGUMENTS $10 $0 x$1y"
    assert expand_arguments(body, None).text == body  # loaded by the model without arguments
    assert expand_arguments(body, "").text == "a=$1 b=$ARGUMENTS[1] all= $10 $0 x$1y"
    assert expand_arguments(body, "p q").text == "a=p b=q all=p q $10 $0 x$1y"  # `$1y` is not a placeholder
    inline = expand_arguments("x!`no` (!`no`) `!` !`yes` \n!`also`\n```!\nblock\n```", "")
    assert inline.commands == ("yes", "also", "block")
    assert expand_arguments("!`echo $1`", "it").commands == ("echo it",)


def test_lenient_front_matter_reads_what_yaml_cannot():
    meta, body, problems = parse_lenient(
        "---\nname: x\ndescription: Use it: when asked. Examples:\nContext: a user\nuser: hi\n"
        'tools: ["Read", "Grep"]\nmaxTurns: 3\npermissionMode: plan\n---\nBody'
    )
    assert meta.description == "Use it: when asked. Examples:\nContext: a user\nuser: hi"
    assert (meta.tools, meta.max_turns, meta.permission_mode, body) == (("Read", "Grep"), 3, "plan", "Body")
    assert len(problems) == 1 and "not valid YAML" in problems[0]
    assert parse_lenient("---\ndescription: On\nuser-invocable: no\n---\nb")[0] == CommandMeta(
        description="On", user_invocable=False
    )
    meta, _, problems = parse_lenient("---\ndescription: [1, 2]\nmaxTurns: many\n---\nb")
    assert meta.description == "" and meta.max_turns is None and len(problems) == 2  # each left out, said
