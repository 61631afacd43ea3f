"""Front matter and body expansion of command files, piece by piece (the e2e tests in
tests/e2e/test_command_files.py cover them through the server)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from coder_ls.commands.expand import ExpandVars, InlineRefused, expand_arguments, run_inline
from coder_ls.commands.frontmatter import FrontMatterError, parse


def test_front_matter_yaml_with_bom_crlf_lists_and_unknown_keys():
    meta, body = parse(
        "\ufeff---\r\nname: x\r\nallowed-tools: [Read, 'Bash(git add:*)']\r\nmodel: claude-opus-4-6\r\n"
        "disable-model-invocation: true\r\nextra: {a: 1}\r\n---\r\nBody\r\nline 2\r\n"
    )
    assert meta.allowed_tools == ("Read", "Bash(git add:*)")
    assert (meta.name, meta.model, meta.disable_model_invocation, meta.user_invocable) == (
        "x",
        "claude-opus-4-6",
        True,
        True,
    )
    assert body == "Body\nline 2"


def test_no_front_matter_and_comma_separated_tools():
    assert parse("just a body\n")[1] == "just a body"
    assert parse("---\nallowed-tools: Read, Edit ,Grep\n---\nb")[0].allowed_tools == ("Read", "Edit", "Grep")


@pytest.mark.parametrize(
    "text, problem",
    [
        ("---\ndescription: [oops\n---\nb", "not valid YAML"),
        ("---\nuser-invocable: maybe\n---\nb", "user-invocable"),
        ("---\nallowed-tools: {a: 1}\n---\nb", "allowed-tools"),
        ("---\ncontext: spoon\n---\nb", "context"),
        ("---\ndescription: x\nbody without end", "closing"),
        ("---\n[1, 2]\n---\nb", "mapping"),
    ],
)
def test_bad_front_matter_says_what_is_wrong(text, problem):
    with pytest.raises(FrontMatterError, match=problem):
        parse(text)


def test_positional_arguments_split_like_a_shell():
    e = expand_arguments("$1|$2|$3|$ARGUMENTS", "'a b' c")
    assert e.text == "a b|c|$3|'a b' c" and e.commands == ()  # a missing one stays as written
    assert expand_arguments("$1|$2", "it's odd").text == "it's|odd\n\nit's odd"  # bad quoting: whitespace
    assert expand_arguments("no placeholder", "x").text == "no placeholder\n\nx"
    assert expand_arguments("$10 stays", "a").text == "$10 stays\n\na"


def test_skill_dir_and_inline_commands():
    e = expand_arguments(
        "${CLAUDE_SKILL_DIR}/s !`ls ${CODER_SKILL_DIR}` !`echo $1`", "x", ExpandVars(skill_dir=Path("/sk"))
    )
    assert e.commands == ("ls /sk", "echo x")
    ran: list[str] = []

    async def run(command: str) -> str:
        ran.append(command)
        return f"<{command}>\n"

    assert asyncio.run(run_inline(e, lambda c: None, run)) == "/sk/s <ls /sk> <echo x>\n\nx"
    assert ran == ["ls /sk", "echo x"]


def test_a_refused_inline_command_stops_all_before_any_runs():
    e = expand_arguments("!`echo one` !`rm -rf /`", "")
    ran: list[str] = []

    async def run(command: str) -> str:
        ran.append(command)
        return ""

    with pytest.raises(InlineRefused, match="rm -rf"):
        asyncio.run(run_inline(e, lambda c: "refused" if "rm" in c else None, run))
    assert ran == []


# -- the command model's keys (contract section 18) ---------------------------------------


def test_named_arguments_expand_after_arguments_and_positions():
    meta, body = parse("---\narguments: [file, focus]\n---\nReview $file for $focus ($1; $filename; $ARGUMENTS)\n")
    assert meta.arguments == ("file", "focus")
    out = expand_arguments(body, "'src/a b.py' speed", None, meta.arguments)
    # `$filename` is not `$file` + "name"; a named value is never expanded again
    assert out.text == "Review src/a b.py for speed (src/a b.py; $filename; 'src/a b.py' speed)"
    missing = expand_arguments("Check $file then $focus", "only.py", None, ("file", "focus"))
    assert missing.text == "Check only.py then "  # placed by name: not appended again
    nested = expand_arguments("A $file", "$focus x", None, ("file", "focus"))
    assert nested.text == "A $focus"


@pytest.mark.parametrize(
    ("front", "message"),
    [
        ("arguments: [file, file]", "twice"),
        ("arguments: ['a-b']", "not a name"),
        ("arguments: [ARGUMENTS]", "not a name"),
        ("effort: extreme", "'effort' must be one of"),
        ("hidden: yes please", "'hidden' must be true or false"),
        ("paths: {a: 1}", "'paths' must be a list"),
    ],
)
def test_bad_command_model_keys_are_clear_errors(front, message):
    with pytest.raises(FrontMatterError, match=message):
        parse(f"---\n{front}\n---\nbody\n")


def test_command_model_keys_are_read():
    meta, _ = parse(
        "---\nhidden: true\neffort: high\npaths: 'src/**/*.py, *.sql'\nprogress-message: reviewing\n"
        "arguments: file focus\n---\nbody\n"
    )
    assert (meta.hidden, meta.effort, meta.progress_message) == (True, "high", "reviewing")
    assert meta.paths == ("src/**/*.py", "*.sql")
    assert meta.arguments == ("file", "focus")
