"""`@` references wherever they come from (issue 36, item 3): one resolver, the user's
deny rules obeyed whatever wrote the reference.

With the user's rule `deny read secrets/**`, a workspace's `.claude/commands/peek.md`
holding `@secrets/key.txt` sent the file to the model on `/peek`, before `/trust`, while
the same reference typed in a prompt, and the `read` tool, were refused. Each test here
drives the real server through a real LSP client against the fake Messages API and
searches every request the model received for the secret.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_e2e import all_text, calls, requests, tool_call, tool_results
from anthropic_server import reply

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]

SECRET = "SECRET-KEY-LINE"
DENY = {"rules": [{"tool": "read", "action": "deny", "path": "secrets/**"}]}


def plant(root: Path, outside: Path) -> None:
    """`secrets/key.txt` (denied by the rule), a link `s -> secrets`, a readable file, and
    a file outside the workspace."""
    (root / "secrets").mkdir(exist_ok=True)
    (root / "secrets" / "key.txt").write_text(f"{SECRET} 1\n{SECRET} 2\n{SECRET} 3\n")
    if not (root / "s").is_symlink():
        (root / "s").symlink_to("secrets")
    (root / "notes.txt").write_text("PLAIN-NOTES\n")
    outside.write_text(f"{SECRET} outside\n")


def command(root: Path, name: str, body: str) -> Path:
    path = root / ".claude" / "commands" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    return path


def sent_to_model(a) -> str:
    return "\n".join(all_text(r) for r in requests(a.fake))


def notices(a) -> str:
    return "\n".join(e["message"] for e in a.s.events_of("notice"))


async def test_an_untrusted_command_file_does_not_attach_a_denied_file(agent, tmp_path):
    """The issue's case, before `/trust`: `/peek` runs, the file stays home, a notice says
    why; typed in a prompt and read by the `read` tool, the same path is refused too."""
    a = await agent(**DENY)
    plant(a.root, tmp_path / "outside.txt")
    peek = command(a.root, "peek", "Summarise @secrets/key.txt and @notes.txt for me.")
    try:
        a.fake.push(reply("done"))
        result = await a.turn("/peek")
        assert result["status"] == "completed", result
        assert SECRET not in sent_to_model(a)
        assert "PLAIN-NOTES" in sent_to_model(a)  # a readable file is still attached, as Claude Code does
        assert "secrets/key.txt was not attached" in notices(a)

        a.fake.push(reply("typed"))
        result = await a.turn("Summarise @secrets/key.txt")
        assert result["status"] == "completed", result
        a.fake.push(calls(tool_call("read", {"path": "secrets/key.txt"}, "r1")), reply("read"))
        result = await a.turn("read it")
        assert result["status"] == "completed", result
        assert "denied" in json.dumps(tool_results(requests(a.fake)[-1])["r1"]) or "rule" in json.dumps(
            tool_results(requests(a.fake)[-1])["r1"]
        )
        assert SECRET not in sent_to_model(a)
    finally:
        peek.unlink()


VARIANTS = [
    "@./secrets/key.txt",
    "@secrets//key.txt",
    "@s/key.txt",  # a link to the denied folder
    "@secrets/key.txt#L1-2",
    "@secrets/",
    "@SECRETS/key.txt",  # another name on a case-sensitive fs: names nothing, stays text
    "@secrets/./key.txt",
    "@notes.txt/../secrets/key.txt",
]


@pytest.mark.parametrize("ref", VARIANTS)
@pytest.mark.parametrize("where", ["typed", "command file"])
async def test_no_spelling_of_a_denied_path_is_attached(agent, tmp_path, ref, where):
    a = await agent(**DENY)
    plant(a.root, tmp_path / "outside.txt")
    peek = command(a.root, "peek2", f"Look at {ref} now.")
    try:
        a.fake.push(reply("done"))
        result = await a.turn("/peek2" if where == "command file" else f"Look at {ref} now.")
        assert result["status"] == "completed", result
        assert SECRET not in sent_to_model(a), ref
        assert "key.txt" not in sent_to_model(a).replace(ref, ""), ref  # not even a listing names it
    finally:
        peek.unlink()


async def test_a_path_outside_the_workspace_is_not_attached_from_a_command_file(agent, tmp_path):
    a = await agent()
    outside = tmp_path / "outside.txt"
    plant(a.root, outside)
    rel = Path("..") / ".." / outside.relative_to(tmp_path.parent)
    up = "../" * len(a.root.relative_to(tmp_path.parent).parts) + str(outside.relative_to(tmp_path.parent))
    if not (a.root / "out-link.txt").is_symlink():
        (a.root / "out-link.txt").symlink_to(outside)
    peek = command(a.root, "peek3", f"Look at @{up} @{outside} @out-link.txt and @{rel}.")
    try:
        a.fake.push(reply("done"))
        result = await a.turn("/peek3")
        assert result["status"] == "completed", result
        assert SECRET not in sent_to_model(a)
    finally:
        peek.unlink()


async def test_the_users_skill_and_a_plugin_command_obey_the_same_rule(agent, tmp_path):
    """The user's own skill and an installed plugin's command reference the same file: a
    rule the user wrote binds their own files too (the resolver does not ask who wrote it)."""
    a = await agent(**DENY)
    plant(a.root, tmp_path / "outside.txt")
    config_home = a.root.parent / f".xdg-{a.root.name}" / "coder"  # the harness's XDG_CONFIG_HOME
    skill = config_home / "skills" / "peekskill" / "SKILL.md"
    skill.parent.mkdir(parents=True, exist_ok=True)
    skill.write_text("---\ndescription: peek\n---\nRead @secrets/key.txt and @ref.md\n")
    (skill.parent / "ref.md").write_text("SKILL-OWN-REFERENCE\n")
    plugin = config_home / "plugins" / "peeker"
    (plugin / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "peeker", "version": "1.0.0"}))
    (plugin / "commands").mkdir(exist_ok=True)
    (plugin / "commands" / "look.md").write_text("Read @secrets/key.txt and @s/key.txt\n")
    try:
        a.fake.push(reply("one"), reply("two"))
        result = await a.turn("/peekskill")
        assert result["status"] == "completed", result
        assert "SKILL-OWN-REFERENCE" in sent_to_model(a)  # the skill's own folder is readable
        result = await a.turn("/peeker:look")
        assert result["status"] == "completed", result
        assert SECRET not in sent_to_model(a)
        assert notices(a).count("was not attached") >= 3
    finally:
        skill.unlink()
        (plugin / "commands" / "look.md").unlink()
        (plugin / ".claude-plugin" / "plugin.json").unlink()


async def test_an_ask_rule_is_the_users_yes_only_when_they_typed_the_reference(agent, tmp_path):
    """A typed `@notes.txt` is the user's own request; a command file's is not: with an
    `ask` rule for it, the file's reference is left for the model to `read` (which asks)."""
    a = await agent(rules=[{"tool": "read", "action": "ask", "path": "notes.txt"}])
    plant(a.root, tmp_path / "outside.txt")
    peek = command(a.root, "peek4", "Look at @notes.txt")
    try:
        a.fake.push(reply("file"), reply("typed"))
        result = await a.turn("/peek4")
        assert result["status"] == "completed", result
        assert "PLAIN-NOTES" not in sent_to_model(a)
        assert "notes.txt was not attached" in notices(a)
        result = await a.turn("Look at @notes.txt")
        assert result["status"] == "completed", result
        assert "PLAIN-NOTES" in all_text(requests(a.fake)[-1])
    finally:
        peek.unlink()


async def test_a_command_body_attaches_what_read_reads_as_claude_code_does(agent, tmp_path):
    """(Moved from tests/e2e/test_claude_code_files.py, where the attachments were part of
    the command's text.) The body's own references attach, as blocks after the text; the
    arguments' are the user's text; a path out of bounds, a handle and code stay text."""
    a = await agent()
    plant(a.root, tmp_path / "outside.txt")
    (a.root / "src").mkdir(exist_ok=True)
    (a.root / "src" / "app.py").write_text("APP-SOURCE\n")
    (a.root / "a.txt").write_text("ARGUMENT-FILE\n")
    if not (a.root / "out-link.txt").is_symlink():
        (a.root / "out-link.txt").symlink_to(tmp_path / "outside.txt")
    body = "Review @src/app.py and @../outside.txt, @out-link.txt and @team. $ARGUMENTS\n```\ncat @notes.txt\n```\n"
    rev = command(a.root, "rev", body)
    try:
        a.fake.push(reply("ok"))
        result = await a.turn("/rev also @a.txt")
        assert result["status"] == "completed", result
        assert a.s.events_of("userMessage")[-1]["text"].startswith("Review @src/app.py and @../outside.txt")
        text = all_text(requests(a.fake)[-1])
        assert "(Attached: src/app.py)\n```\nAPP-SOURCE\n" in text
        assert SECRET not in text and "ARGUMENT-FILE" not in text and "PLAIN-NOTES" not in text
    finally:
        rev.unlink()


async def test_a_forked_command_gives_its_subagent_the_same_attachments(agent, tmp_path):
    """`context: fork`: the command runs as a subagent, whose prompt carries the body's
    attachments as text; a denied file is not among them."""
    a = await agent(**DENY)
    plant(a.root, tmp_path / "outside.txt")
    body = "---\ncontext: fork\nagent: explore\n---\nSee @secrets/key.txt and @notes.txt\n"
    survey = command(a.root, "forkpeek", body)
    try:
        a.fake.push(reply("surveyed"))
        result = await a.turn("/forkpeek")
        assert result["status"] == "completed" and result["reply"] == "surveyed", result
        (sub,) = requests(a.fake)
        assert "PLAIN-NOTES" in all_text(sub) and SECRET not in json.dumps(sub.body)
        assert "secrets/key.txt was not attached" in notices(a)
    finally:
        survey.unlink()


async def test_texts_the_user_did_not_write_attach_nothing(agent, tmp_path):
    """An agent definition, a skill the model loads and a code action's selection hold an
    `@` naming a readable file: none attaches it (only a prompt and a command the user
    invoked carry `References`)."""
    from lsprotocol import types

    a = await agent()
    plant(a.root, tmp_path / "outside.txt")
    agent_file = a.root / ".claude" / "agents" / "refagent.md"
    agent_file.parent.mkdir(parents=True, exist_ok=True)
    agent_file.write_text("---\nname: refagent\ndescription: R\n---\nAlways consider @notes.txt first.\n")
    skill = a.root / ".claude" / "skills" / "refskill" / "SKILL.md"
    skill.parent.mkdir(parents=True, exist_ok=True)
    skill.write_text("---\ndescription: refs\n---\nConsider @notes.txt\n")
    (a.root / "explain_me.py").write_text("# see @notes.txt\nx = 1\n")
    try:
        a.fake.push(
            calls(tool_call("task", {"agent": "refagent", "prompt": "go"}, "t1")),
            reply("sub done"),
            calls(tool_call("skill", {"name": "refskill"}, "k1")),
            reply("done"),
        )
        result = await a.turn("use refagent, then load refskill")
        assert result["status"] == "completed", result
        uri = a.s.open("explain_me.py", "# see @notes.txt\nx = 1\n", version=1)
        rng = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=2, character=0))
        actions = await a.s.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=rng,
                context=types.CodeActionContext(diagnostics=[]),
            )
        )
        explain = next(x for x in actions if x.title == "Coder: Explain")
        a.fake.push(reply("explained"))
        result = await a.s.execute("coder.codeAction", explain.command.arguments[0])
        assert result["status"] == "completed", result
        everything = json.dumps([r.body for r in requests(a.fake)])
        assert "Always consider @notes.txt first." in everything and "Consider @notes.txt" in everything
        assert "PLAIN-NOTES" not in everything
    finally:
        agent_file.unlink()
        skill.unlink()
