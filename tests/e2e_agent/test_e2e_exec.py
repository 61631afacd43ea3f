"""`coder-ls exec`, end to end (contract section 22, "Headless"): the real program as a
subprocess, against the strict fake Messages endpoint, in a real git workspace.

Every run gets a poisoned `anthropic` package first on its path: importing it ends the
process with exit 97, so each test also checks that the path never imports the SDK.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from agent_e2e import all_text, api_env, calls, result_text, tool_call, tool_results
from anthropic_server import FakeAnthropicServer, reply
from harness import lsp_session, server_env

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"
EXEC = [sys.executable, "-m", "coder_ls", "exec"]
POISONED = 97  # the exit status of a run that imported `anthropic`
NO_AUTO_ALLOW = {"sandbox": {"autoAllow": False}}  # a line the sandbox holds would run unasked


def exec_env(root: Path, fake: FakeAnthropicServer | None, drop: tuple[str, ...] = ()) -> dict[str, str]:
    poison = root.parent / "poison"
    (poison / "anthropic").mkdir(parents=True, exist_ok=True)
    (poison / "anthropic" / "__init__.py").write_text(f"import os\nos._exit({POISONED})\n")
    env = server_env(root, api_env(fake) if fake is not None else None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(poison), env.get("PYTHONPATH", "")) if p)
    for name in drop:
        env.pop(name, None)
    return env


def run_exec(
    root: Path, fake: FakeAnthropicServer | None, *args: str, drop: tuple[str, ...] = (), timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*EXEC, *args],
        cwd=root,
        env=exec_env(root, fake, drop),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def user_config(root: Path, values: dict[str, Any]) -> None:
    """The user's own config.json (the harness's XDG_CONFIG_HOME)."""
    path = root.parent / f".xdg-{root.name}" / "coder" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(values))


def events_of(stdout: str) -> list[dict[str, Any]]:
    """`--json`'s stdout, line by line: every line one event of the LSP contract's schema."""
    schema = json.loads((SCHEMAS / "event.json").read_text())
    events = []
    for line in stdout.splitlines():
        event = json.loads(line)
        jsonschema.validate(event, schema)
        events.append(event)
    return events


def test_plain_output_is_the_answer_and_a_line_per_tool_call(ws, fake):
    fake.push(calls(tool_call("read", {"path": "app.py"}, "r1")), reply("`add` subtracts: it returns a - b."))
    run = run_exec(ws, fake, "what does add do?")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["> read: app.py", "`add` subtracts: it returns a - b."], run.stdout
    assert "coder-ls: session " in run.stderr  # how to continue it
    assert "what does add do?" in json.dumps(fake.message_requests[0].body["messages"])
    assert "return a - b" in result_text(tool_results(fake.message_requests[-1])["r1"])


def test_json_is_one_lsp_event_per_line(ws, fake):
    fake.push(calls(tool_call("read", {"path": "app.py"}, "r1")), reply("Done reading."))
    run = run_exec(ws, fake, "--json", "read app.py")
    assert run.returncode == 0, run.stderr
    events = events_of(run.stdout)
    types = [e["type"] for e in events]
    assert types[-1] == "turnFinished" and events[-1]["status"] == "completed", types
    assert {"toolCallBegin", "toolCallEnd", "assistantMessage"} <= set(types), types
    begin = next(e for e in events if e["type"] == "toolCallBegin")
    assert begin["tool"] == "read" and begin["input"] == {"path": "app.py"} and begin["callId"] == "r1"
    assert [e for e in events if e["type"] == "assistantMessage"][-1]["text"] == "Done reading."
    assert len({e["sessionId"] for e in events}) == 1 and len({e["submissionId"] for e in events}) == 1
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert all("agentId" not in e for e in events)  # left out, as over LSP, for the main agent


def test_a_ci_pipeline_reads_the_json_with_jq(ws, fake):
    fake.push(calls(tool_call("read", {"path": "README.md"}, "r1")), reply("All good."))
    exe = " ".join(f"'{w}'" for w in EXEC)
    line = f"set -o pipefail; {exe} --json 'check the readme' | jq -r 'select(.type == \"assistantMessage\") | .text'"
    run = subprocess.run(
        ["bash", "-c", line],
        cwd=ws,
        env=exec_env(ws, fake),
        capture_output=True,
        text=True,
        timeout=90,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == "All good.\n"


def test_a_reader_that_leaves_ends_the_run_at_once(ws):
    """`| head -1`: the turn ends as on Ctrl-C (130 under pipefail), no traceback, no wait."""
    exe = " ".join(f"'{w}'" for w in EXEC)
    for flag in ("--json", ""):
        line = f"set -o pipefail; {exe} {flag} '!seq 1 300000' | head -1"
        started = time.monotonic()
        run = subprocess.run(
            ["bash", "-c", line], cwd=ws, env=exec_env(ws, None), capture_output=True, text=True, timeout=90
        )
        assert run.returncode == 130, run.stderr
        assert len(run.stdout.splitlines()) == 1 and "Traceback" not in run.stderr, run.stderr
        assert time.monotonic() - started < 30  # not the shell's timeout


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--bogus", "hi"], "unrecognized arguments: --bogus"),
        (["   "], "the prompt is empty"),
        ([], "the prompt is empty"),
        (["--allow", "Frobnicate(x)", "hi"], "bad rule: --allow 'Frobnicate(x)'"),
        (["--allow", "Bash", "hi"], "would allow every command"),
        (["--deny", "Task", "hi"], "cannot be denied"),
        (["--permissions", "anything", "hi"], "invalid choice: 'anything'"),
        (["--session", "0123456789abcdef0123456789abcdef", "hi"], "Unknown session"),
    ],
)
def test_bad_input_is_exit_2_and_asks_the_model_nothing(ws, fake, args, said):
    run = run_exec(ws, fake, *args)
    assert run.returncode == 2, (run.returncode, run.stderr)
    assert said in run.stderr
    assert run.stdout == ""
    assert fake.message_requests == []


def test_a_missing_api_key_is_exit_1_and_names_the_variable(ws):
    run = run_exec(ws, None, "hello", drop=("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"))
    assert run.returncode == 1, (run.returncode, run.stderr)
    assert "ANTHROPIC_API_KEY" in run.stderr


def test_a_shell_line_prints_its_output_and_fails_when_it_fails(ws):
    """`!cmd` needs no model (nor a key): its output on stdout, exit 1 when it exits non-zero."""
    ok = run_exec(ws, None, "!echo hi there", drop=("ANTHROPIC_API_KEY",))
    assert (ok.returncode, ok.stdout) == (0, "hi there\n"), ok.stderr
    failed = run_exec(ws, None, "!echo broken; exit 3", drop=("ANTHROPIC_API_KEY",))
    assert (failed.returncode, failed.stdout) == (1, "broken\n"), failed.stderr


def test_a_question_is_denied_on_stderr_and_never_waits(ws, fake):
    """balanced asks before a command that writes: nobody can answer, so it is denied at
    once, even with a stdin that stays open and never says anything."""
    user_config(ws, NO_AUTO_ALLOW)
    fake.push(calls(tool_call("bash", {"command": "echo hi > out.txt"}, "b1")), reply("I could not write it."))
    out, err = ws.parent / "stdout", ws.parent / "stderr"
    with out.open("w") as o, err.open("w") as e:
        proc = subprocess.Popen(
            [*EXEC, "hello"], cwd=ws, env=exec_env(ws, fake), stdin=subprocess.PIPE, stdout=o, stderr=e
        )
        try:
            code = proc.wait(timeout=90)  # stdin held open the whole time: nothing reads it
        finally:
            proc.kill()
            assert proc.stdin is not None
            proc.stdin.close()
    assert code == 0, err.read_text()
    assert "denied (nobody to ask in exec)" in err.read_text() and "echo hi > out.txt" in err.read_text()
    assert not (ws / "out.txt").exists()
    assert "did not run" in result_text(tool_results(fake.message_requests[-1])["b1"])
    lines = out.read_text().splitlines()
    assert lines[0] == "> bash: echo hi > out.txt" and lines[-1] == "I could not write it.", lines


def test_allow_lets_the_command_run_and_deny_refuses_it(ws, fake):
    user_config(ws, NO_AUTO_ALLOW)
    fake.push(calls(tool_call("bash", {"command": "echo hi > out.txt"}, "b1")), reply("Written."))
    run = run_exec(ws, fake, "--allow", "Bash(echo:*)", "write it")
    assert run.returncode == 0, run.stderr
    assert (ws / "out.txt").read_text() == "hi\n"
    assert "denied" not in run.stderr

    (ws / "out.txt").unlink()
    fake.push(
        calls(tool_call("bash", {"command": "echo hi > out.txt"}, "b2")),
        calls(tool_call("edit", {"path": "app.py", "oldString": "a - b", "newString": "a + b"}, "e2")),
        reply("Refused twice."),
    )
    run = run_exec(ws, fake, "--permissions", "yolo", "--deny", "Bash(echo:*)", "--deny", "Edit(app.py)", "try")
    assert run.returncode == 0, run.stderr
    assert not (ws / "out.txt").exists() and "a - b" in (ws / "app.py").read_text()
    results = tool_results(fake.message_requests[-1])
    assert "may not run `echo`" in result_text(results["b2"])
    assert "may not use edit app.py" in result_text(results["e2"])


def test_a_deny_reaches_the_subagents_too(ws, fake):
    fake.push(
        {**calls(tool_call("bash", {"command": "echo hi > out.txt"}, "b1")), "when": "write the file"},
        {**reply("The subagent gave up."), "when": "may not run"},
        calls(tool_call("task", {"agent": "general", "prompt": "write the file"}, "t1")),
        reply("done"),
    )
    run = run_exec(ws, fake, "--permissions", "yolo", "--deny", "Bash(echo:*)", "delegate it")
    assert run.returncode == 0, run.stderr
    assert not (ws / "out.txt").exists()
    sub = [r for r in fake.message_requests if "may not run `echo`" in all_text(r)]
    assert sub, [all_text(r) for r in fake.message_requests]


def test_session_continues_the_conversation(ws, fake):
    fake.push(reply("Noted: the magic word is plover."))
    first = run_exec(ws, fake, "--json", "remember the magic word plover")
    assert first.returncode == 0, first.stderr
    session_id = events_of(first.stdout)[-1]["sessionId"]
    fake.push(reply("It was plover."))
    second = run_exec(ws, fake, "--json", "--session", session_id, "what was the magic word?")
    assert second.returncode == 0, second.stderr
    assert {e["sessionId"] for e in events_of(second.stdout)} == {session_id}
    sent = json.dumps(fake.message_requests[-1].body["messages"])
    assert "remember the magic word plover" in sent and "Noted: the magic word is plover." in sent


def test_sigint_ends_the_turn_cleanly_with_130(ws, fake):
    fake.push(calls(tool_call("bash", {"command": "sleep 60"}, "s1")), reply("never"))
    proc = subprocess.Popen(
        [*EXEC, "--json", "--permissions", "yolo", "wait a minute"],
        cwd=ws,
        env=exec_env(ws, fake),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:  # until the command runs
            lines.append(line)
            if json.loads(line)["type"] == "toolCallBegin":
                break
        time.sleep(0.5)
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert time.monotonic() - started < 20
    events = events_of("".join(lines) + rest)
    assert events[-1]["type"] == "turnFinished" and events[-1]["status"] == "cancelled"
    assert "interrupted" in err


@pytest.mark.asyncio(loop_scope="package")
async def test_undo_in_an_editor_session_reverts_what_exec_did(ws, fake):
    fake.push(
        calls(tool_call("edit", {"path": "app.py", "oldString": "a - b", "newString": "a + b"}, "e1")), reply("Fixed.")
    )
    run = run_exec(ws, fake, "--permissions", "auto-edit", "fix add")
    assert run.returncode == 0, run.stderr
    assert "a + b" in (ws / "app.py").read_text()
    async with lsp_session(ws, env=api_env(fake)) as s:
        undone = await s.execute("coder.undo", {})
        assert undone["status"] == "completed", undone
        assert undone["data"]["restored"] == ["app.py"], undone
    assert "a - b" in (ws / "app.py").read_text() and "a + b" not in (ws / "app.py").read_text()


@pytest.mark.asyncio(loop_scope="package")
async def test_exec_continues_an_editor_session_and_its_undo_goes_in_order(ws, fake):
    """The editor's session, continued by exec, resumed in the editor: `/undo` takes exec's
    edit first (the session's last change), then the editor's own, while another window's
    later change is left alone."""
    async with lsp_session(ws, env=api_env(fake)) as s:
        done = await s.execute("coder.input", {"text": "!echo editor > notes.txt"})
        assert done["status"] == "completed", done
        sid = done["sessionId"]
    fake.push(
        calls(tool_call("edit", {"path": "app.py", "oldString": "a - b", "newString": "a + b"}, "e1")), reply("Fixed.")
    )
    run = run_exec(ws, fake, "--json", "--permissions", "auto-edit", "--session", sid, "fix add")
    assert run.returncode == 0, run.stderr
    assert {e["sessionId"] for e in events_of(run.stdout)} == {sid}
    async with lsp_session(ws, env=api_env(fake)) as other, lsp_session(ws, env=api_env(fake)) as s:
        later = await other.execute("coder.input", {"text": "!echo other > other.txt"})  # a window still open
        assert later["status"] == "completed", later
        resumed = await s.execute("coder.resume", {"args": sid})
        assert resumed["status"] == "completed", resumed
        first = await s.execute("coder.undo", {})
        assert first["data"]["restored"] == ["app.py"], first
        assert "a - b" in (ws / "app.py").read_text() and (ws / "notes.txt").read_text() == "editor\n"
        second = await s.execute("coder.undo", {})
        assert second["data"]["removed"] == ["notes.txt"], second
        assert (ws / "other.txt").read_text() == "other\n"
