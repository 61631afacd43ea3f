"""The command model's fields through a real turn against the strict fake (contract
section 18): a hidden command runs, named arguments expand, a command's progress message
titles its turn, and a skill's when_to_use reaches the model with its description."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_e2e import calls, last_user_text, progress_messages, result_text, tool_call, tool_results
from anthropic_server import reply

pytestmark = pytest.mark.asyncio(loop_scope="package")


@pytest.fixture
def user_dir(shared_session) -> Iterator[Path]:
    root = shared_session.root
    base = root.parent / f".xdg-{root.name}" / "coder"
    made: list[Path] = []

    def write(rel: str, text: str) -> Path:
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        made.append(path)
        return path

    yield write  # type: ignore[misc]
    for path in made:
        path.unlink(missing_ok=True)


async def test_a_hidden_command_with_named_arguments_runs_under_its_progress_message(agent, user_dir):
    user_dir(
        "commands/migrate.md",
        "---\nhidden: true\narguments: [table, column]\nprogress-message: Planning the migration\n---\n"
        "Plan a migration of $table adding $column.\n",
    )
    a = await agent()
    listed = await a.s.execute("coder.listCommands", {})
    assert "migrate" not in {e["name"] for e in listed["data"]["commands"]}
    hidden = {
        e["name"]: e for e in (await a.s.execute("coder.listCommands", {"includeHidden": True}))["data"]["commands"]
    }
    assert hidden["migrate"]["arguments"] == ["table", "column"]
    assert hidden["migrate"]["argumentHint"] == "<table> <column>"  # derived: no argument-hint
    a.fake.push(reply("planned"))
    result = await a.turn("/migrate users email")
    assert (result["status"], result["reply"]) == ("completed", "planned"), result
    assert "Plan a migration of users adding email." in last_user_text(a.fake.message_requests[0])
    assert "Planning the migration" in progress_messages(a.s)


async def test_when_to_use_reaches_the_model_with_the_description(agent, user_dir):
    user_dir(
        "skills/sql-review/SKILL.md",
        "---\ndescription: Review SQL\nwhen_to_use: a query touches more than one table\n---\nCheck the joins.\n",
    )
    a = await agent()
    a.fake.push(reply("ok"))
    await a.turn("hello")
    system = str(a.fake.message_requests[0].body.get("system"))
    assert "Review SQL" in system and "a query touches more than one table" in system


def effort_sent(request) -> str | None:
    return (request.body.get("output_config") or {}).get("effort")


async def test_a_commands_effort_and_the_sessions_effort_change_what_the_api_receives(agent, user_dir):
    user_dir("commands/deep.md", "---\neffort: high\n---\nThink about $ARGUMENTS\n")
    a = await agent()
    a.fake.push(reply("deep"), reply("plain"), reply("low"))
    assert (await a.turn("/deep the design"))["status"] == "completed"
    assert (await a.turn("and now?"))["status"] == "completed"
    first, second = a.fake.message_requests
    assert effort_sent(first) == "high"  # this command's turn only
    assert effort_sent(second) is None  # the model's default again

    shown = await a.turn("/effort")
    assert shown["data"] == {
        "kind": "effort",
        "effort": None,
        "source": "default",
        "levels": ["low", "medium", "high", "max"],
    }
    bad = await a.turn("/effort extreme")
    assert bad["error"]["code"] == "invalid_argument"
    assert (await a.turn("/effort low"))["status"] == "completed"
    status = await a.turn("/status")
    assert status["data"]["effort"] == "low" and status["data"]["permissions"] == "balanced"
    await a.turn("go on")
    assert effort_sent(a.fake.message_requests[2]) == "low"

    await a.turn("/effort auto")


async def test_max_effort_on_a_model_that_stops_at_high_sends_high(agent):
    a = await agent(model="claude-sonnet-4-6")
    a.fake.push(reply("a"))
    await a.turn("/effort max")
    await a.turn("once more")
    assert effort_sent(a.fake.message_requests[0]) == "high"
    await a.turn("/effort auto")


async def test_effort_on_a_model_without_levels_chooses_the_thinking_budget(agent, user_dir):
    a = await agent(model="claude-haiku-4-5")
    a.fake.push(reply("a"), reply("b"))
    await a.turn("/effort low")
    await a.turn("first")
    await a.turn("/effort max")
    await a.turn("second")
    low, high = a.fake.message_requests
    assert "output_config" not in low.body and "output_config" not in high.body  # the API would refuse it
    assert low.body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert high.body["thinking"]["budget_tokens"] == 32_000
    await a.turn("/effort auto")


async def test_a_sensitive_commands_arguments_stay_out_of_the_log_index_and_events(agent, user_dir):
    user_dir("commands/dblogin.md", "---\nsensitive: true\n---\nConnect to the database with password $1\n")
    a = await agent()
    listed = {e["name"]: e for e in (await a.s.execute("coder.listCommands", {}))["data"]["commands"]}
    assert listed["dblogin"]["sensitive"] is True
    a.fake.push(reply("Connected with hunter2-Secret."))
    result = await a.turn("/dblogin hunter2-Secret")
    assert result["status"] == "completed", result
    assert "hunter2-Secret" in last_user_text(a.fake.message_requests[0])  # the model needs it
    shown = [e["text"] for e in a.s.events_of("userMessage")] + [e["text"] for e in a.s.events_of("assistantMessage")]
    assert shown and all("hunter2-Secret" not in t for t in shown) and any("***" in t for t in shown)
    state = a.root / ".coder"
    log = next(state.glob(f"sessions/{result['sessionId']}*.jsonl"))
    assert "***" in log.read_text()
    for path in [log, *state.glob("index.sqlite*")]:
        assert b"hunter2-Secret" not in path.read_bytes(), path


def listed_db(result: dict) -> dict:
    return {e["name"]: e for e in result["data"]["commands"]}["db"]


async def test_a_conditional_skill_reaches_the_model_only_after_a_matching_file_is_read(agent, user_dir):
    user_dir("skills/db/SKILL.md", "---\ndescription: Database models\npaths: ['src/db/*.py']\n---\nUse the ORM.\n")
    a = await agent()
    (a.root / "src" / "db").mkdir(parents=True, exist_ok=True)
    (a.root / "src" / "db" / "models.py").write_text("class User: ...\n")
    a.fake.push(
        reply("hi"),
        calls(tool_call("read", {"path": "src/db/models.py"}, "toolu_db1")),
        calls(tool_call("skill", {"name": "db"}, "toolu_db2")),  # loaded in the same turn
        reply("read it"),
    )
    await a.turn("hello")
    entry = listed_db(await a.s.execute("coder.listCommands", {"sessionId": a.s.events[-1]["sessionId"]}))
    assert entry["activation"] == {"paths": ["src/db/*.py"], "active": False}
    result = await a.turn("look at the models")
    assert result["status"] == "completed", result
    first, before_read, after_read, after_skill = a.fake.message_requests
    assert "skill" in {t["name"] for t in before_read.body["tools"]}  # offered before it activates
    assert "Use the ORM." in result_text(tool_results(after_skill)["toolu_db2"])
    assert "Database models" not in str(first.body["system"]) and "Database models" not in str(
        before_read.body["system"]
    )
    assert "- db: Database models (activated by src/db/models.py)" in str(after_read.body["system"])
    entry = listed_db(await a.s.execute("coder.listCommands", {"sessionId": result["sessionId"]}))
    assert entry["activation"] == {"paths": ["src/db/*.py"], "active": True, "by": "src/db/models.py"}
    skills = {s["name"]: s for s in (await a.turn("/skills"))["data"]["skills"]}
    assert skills["db"]["active"] is True and skills["db"]["activatedBy"] == "src/db/models.py"

    other = await a.s.execute("coder.new", {})  # another session has touched nothing
    entry = listed_db(await a.s.execute("coder.listCommands", {"sessionId": other["sessionId"]}))
    assert entry["activation"]["active"] is False
    a.fake.push(reply("named"))
    await a.turn("what does @src/db/models.py hold?", sessionId=other["sessionId"])  # named in the input
    assert "(activated by src/db/models.py)" in str(a.fake.message_requests[-1].body["system"])


async def test_activation_is_kept_across_compact_and_resume(fake, tmp_path):
    from agent_e2e import api_env
    from harness import init_git, lsp_session

    root = init_git(tmp_path / "ws", {"sql/q.sql": "select 1;\n"})
    skills = root.parent / f".xdg-{root.name}" / "coder" / "skills" / "sql"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").write_text("---\ndescription: SQL rules\npaths: '*.sql'\n---\nQuote names.\n")
    fake.push(calls(tool_call("read", {"path": f"{root}/sql/q.sql"}, "toolu_q")), reply("read"), reply("summary"))
    async with lsp_session(root, env=api_env(fake)) as s:
        first = await s.execute("coder.input", {"text": "check the query"})
        sid = first["sessionId"]
        compacted = await s.execute("coder.compact", {"sessionId": sid})
        assert compacted["status"] == "completed", compacted
        entry = listed_db_named(await s.execute("coder.listCommands", {"sessionId": sid}), "sql")
        assert entry["activation"]["by"] == "sql/q.sql"
    async with lsp_session(root, env=api_env(fake)) as s:
        resumed = await s.execute("coder.resume", {"args": sid})
        assert resumed["status"] == "completed", resumed
        entry = listed_db_named(await s.execute("coder.listCommands", {"sessionId": sid}), "sql")
        assert entry["activation"] == {"paths": ["*.sql"], "active": True, "by": "sql/q.sql"}
        fake.push(reply("ok"))
        await s.execute("coder.input", {"text": "and now?", "sessionId": sid})
        assert "- sql: SQL rules (activated by sql/q.sql)" in str(fake.message_requests[-1].body["system"])


def listed_db_named(result: dict, name: str) -> dict:
    return {e["name"]: e for e in result["data"]["commands"]}[name]


async def test_a_commands_model_alias_is_resolved_as_the_sessions_is(agent, user_dir):
    user_dir("commands/big-think.md", "---\nmodel: opus\n---\nThink about $ARGUMENTS\n")
    a = await agent()
    a.fake.push(reply("thought"))
    assert (await a.turn("/big-think it"))["status"] == "completed"
    sent = a.fake.message_requests[0].body["model"]
    assert sent.startswith("claude-opus-") and sent != "opus", sent  # the newest Opus the account lists
