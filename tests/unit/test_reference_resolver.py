"""The one `@` reference resolver (`agent/references.py`, issue 36 item 3): its syntax, its
checks on a real folder, and the one rule for which texts may attach at all.

The end-to-end tests (tests/e2e_agent/test_e2e_reference_sources.py,
tests/acp/test_acp_references.py) drive the same through a real client; these pin the
pieces fast."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest

import coder_ls
from coder_ls.agent.references import Where, locate, prose, tokens
from coder_ls.protocol.config import Config, Rule

PACKAGE = Path(coder_ls.__file__).parent


def test_one_syntax_trailing_punctuation_brackets_and_fences():
    text = "see @a.py. and (@b/c.py) or [@d.md], mail x@y.z\n```\n@in/code.py\n```\n~~~~\n@tilde\n~~~~\nend @e"
    assert tokens(text) == ["a.py.", "b/c.py)", "d.md],", "e"]
    assert prose("````\n```\n@x\n```\n````\n@y") == "\n\n\n\n\n@y"  # a longer fence holds a shorter one
    assert tokens("```\n@never closed") == []


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "secrets").mkdir(parents=True)
    (root / "secrets" / "key.txt").write_text("KEY\n")
    (root / "s").symlink_to("secrets")
    (root / "notes.txt").write_text("NOTES\n")
    (tmp_path / "outside.txt").write_text("OUT\n")
    (root / "out").symlink_to(tmp_path / "outside.txt")
    return root


DENY = Config(rules=[Rule(tool="read", action="deny", path="secrets/**")])


@pytest.mark.parametrize(
    "ref",
    [
        "@secrets/key.txt",
        "@./secrets/key.txt",
        "@secrets//key.txt",
        "@s/key.txt",
        "@secrets/key.txt#L1-2",
        "@secrets/./key.txt",
        "@notes.txt/../secrets/key.txt",
    ],
)
@pytest.mark.parametrize("typed", [True, False])
def test_every_spelling_of_a_denied_file_is_refused_with_a_note(ws, ref, typed):
    found, notes = locate(ws, DENY, f"look at {ref}", Where(typed=typed))
    assert found == [] and len(notes) == 1 and "was not attached" in notes[0], (found, notes)


def test_a_listing_leaves_out_what_the_rules_deny(ws):
    from coder_ls.agent.references import _listing

    found, notes = locate(ws, DENY, "@./", Where(typed=True))
    assert [f.is_dir for f in found] == [True] and notes == []
    shown, under = _listing(ws, DENY, found[0].path)
    assert shown == "./" and "notes.txt" in under and not any("key.txt" in f for f in under)


def test_another_case_names_nothing_on_a_case_sensitive_disk(ws):
    found, notes = locate(ws, DENY, "@SECRETS/key.txt", Where(typed=True))
    assert (found, notes) == ([], [])


def test_outside_and_links_out_are_refused_and_a_commands_folder_is_tried_after_the_workspace(ws, tmp_path):
    found, notes = locate(ws, Config(), f"@../outside.txt @out @{tmp_path}/outside.txt", Where())
    assert found == [] and len(notes) == 3 and all("outside the workspace" in n for n in notes)
    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / "ref.md").write_text("REF\n")
    (skill / "notes.txt").write_text("SKILL NOTES\n")
    found, notes = locate(ws, Config(), "@ref.md @notes.txt", Where(folders=(skill,)))
    assert [f.path for f in found] == [skill / "ref.md", ws / "notes.txt"] and notes == []  # the workspace first


def test_an_ask_rule_is_a_yes_only_for_a_typed_reference(ws):
    ask = Config(rules=[Rule(tool="read", action="ask", path="notes.txt")])
    assert [f.token for f in locate(ws, ask, "@notes.txt", Where(typed=True))[0]] == ["notes.txt"]
    found, notes = locate(ws, ask, "@notes.txt", Where(typed=False))
    assert found == [] and "asks" in notes[0]


def _calls(tree: ast.AST, name: str) -> list[ast.Call]:
    return [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", None)) == name
    ]


def test_only_a_prompt_and_an_invoked_command_carry_references():
    """The one rule for which texts may attach: `References` is made in two places, the
    prompt's planner (`engine/executor.py`) and a command file's handler
    (`commands/files.py`); every other `RunAgent` (code actions, MCP prompts, /review,
    /commit, /task, subagents) has none, and `engine/tasks.py` only passes one on."""
    made: dict[str, int] = {}
    passed: dict[str, int] = {}
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        rel = path.relative_to(PACKAGE).as_posix()
        if n := len(_calls(tree, "References")):
            made[rel] = n
        for call in _calls(tree, "RunAgent") + _calls(tree, "RunPromptCommand"):
            if any(k.arg == "references" for k in call.keywords):
                passed[rel] = passed.get(rel, 0) + 1
    assert made == {"engine/executor.py": 1, "commands/files.py": 1}, made
    assert passed == {"engine/executor.py": 1, "engine/tasks.py": 1, "commands/files.py": 1}, passed


def test_an_mcp_prompt_is_text_whatever_it_holds():
    from coder_ls.commands.mcp_prompts import _command
    from coder_ls.mcp.connection import PromptInfo

    message = SimpleNamespace(role="user", content=SimpleNamespace(type="text", text="read @secrets/key.txt"))

    async def get_prompt(name, values):
        return SimpleNamespace(messages=[message])

    conn = SimpleNamespace(name="srv", get_prompt=get_prompt)
    outcome = asyncio.run(_command(conn, PromptInfo(name="p", description="d")).handler(None, ""))  # type: ignore[arg-type]
    (action,) = outcome.actions
    assert action.prompt == "read @secrets/key.txt" and action.references is None
