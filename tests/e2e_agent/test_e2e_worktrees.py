"""Isolated steps in git worktrees (contract section 25, "Worktrees") end to end: a real
LSP client, the strict fake Messages API, real git. Two parallel subagents editing the same
file: one patch lands, the other's conflict is reported with both sides, and `/undo`
reverts what landed; a step that fails leaves the user's tree alone and its worktree kept
until `/worktrees drop`; the user's uncommitted work is in the worktree from the start;
a `/task` step under `tasks.isolation`; and a step that leaves a link out or a protected
file in its worktree has its patch refused."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from agent_e2e import APP, api_env, calls, result_text, tool_call, tool_results
from anthropic_server import FakeAnthropicServer, reply
from harness import Session, full_caps, init_git, lsp_session
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="package")

WRITER = (
    "---\nname: writer\ndescription: Changes code in a worktree of its own\n"
    "tools: Read, Edit, Write, Bash\nisolation: worktree\n---\nYou change code.\n"
)


WRITE_A = {"agent": "writer", "prompt": "STEP-A fix add"}
WRITE_B = {"agent": "writer", "prompt": "STEP-B fix add"}


def exists(path: Path) -> bool:
    return os.path.lexists(path)


def routed(when: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {**spec, "when": when}


def worktrees_of(root: Path) -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(root), "worktree", "list", "--porcelain"],
        capture_output=True, text=True, check=True, stdin=subprocess.DEVNULL,
    ).stdout  # fmt: skip
    return [line[9:] for line in out.splitlines() if line.startswith("worktree ")]


def state_worktrees(root: Path) -> Path:
    return root.parent / f".xdg-state-{root.name}" / "coder" / "worktrees"


async def configure(s: Session, **settings: Any) -> None:
    s.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"coder": {"permissions": "yolo", **settings}})
    )
    assert (await s.execute("coder.new", {}))["status"] == "completed"


def task_text(fake: FakeAnthropicServer, call_id: str) -> str:
    return result_text(tool_results(fake.message_requests[-1])[call_id])


def edit(old: str, new: str, call_id: str) -> dict[str, Any]:
    return calls(tool_call("edit", {"path": "app.py", "oldString": old, "newString": new}, call_id))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = init_git(tmp_path / "ws", {"app.py": APP, "README.md": "# demo\n"})
    (root / ".claude" / "agents").mkdir(parents=True)
    (root / ".claude" / "agents" / "writer.md").write_text(WRITER)
    return root


async def test_two_parallel_writers_one_lands_one_conflicts_and_undo_reverts(ws, fake):
    async with lsp_session(ws, caps=full_caps(), env=api_env(fake)) as s:
        await configure(s)
        fake.push(
            routed("STEP-A", edit("a - b", "a + b", "ea")),
            routed("STEP-A", reply("A done")),
            routed("STEP-B", edit("a - b", "a * b", "eb")),
            routed("STEP-B", reply("B done")),
            calls(tool_call("task", {"tasks": [WRITE_A, WRITE_B]}, "t1")),
            reply("one landed"),
        )
        result = await s.execute("coder.input", {"text": "fix add twice, in parallel"})
        assert result["status"] == "completed", result
        assert "return a + b" in (ws / "app.py").read_text()  # the first in the order given
        text = task_text(fake, "t1")
        assert "[1] writer (completed):\nA done" in text and "patch was applied: app.py" in text, text
        assert "[2] writer (failed):\nB done" in text and "conflicts with the workspace" in text, text
        assert "+    return a * b" in text and "-    return a - b" in text  # the hunk that did not apply
        assert "The current text of app.py:\ndef add(a, b):\n    return a + b" in text  # and what is there now
        # the landed patch came through the editor, like any edit
        assert any("app.py" in str(e.edit) for e in s.edits)
        # the loser's worktree is kept, listed, and dropped by the command
        listed = await s.execute("coder.worktrees", {})
        [kept] = listed["data"]["worktrees"]
        assert "conflict" in kept["reason"] and "return a * b" in (Path(kept["path"]) / "app.py").read_text()
        assert len(worktrees_of(ws)) == 2
        dropped = await s.execute("coder.input", {"text": f"/worktrees drop {kept['id']}"})
        assert dropped["data"]["dropped"] == [kept["id"]] and dropped["data"]["worktrees"] == []
        assert worktrees_of(ws) == [str(ws)] and not exists(Path(kept["path"]))
        # /undo reverts the patch that landed
        undone = await s.execute("coder.input", {"text": "/undo"})
        assert undone["status"] == "completed", undone
        assert (ws / "app.py").read_text() == APP


async def test_a_failed_step_leaves_the_tree_alone_and_its_worktree_kept(ws, fake):
    (ws / "README.md").write_text("# demo\nuncommitted line\n")  # the user's work, not committed
    (ws / "notes.txt").write_text("untracked notes\n")
    (ws / ".gitignore").write_text("*.log\n")
    (ws / "secret.log").write_text("ignored\n")
    async with lsp_session(ws, caps=full_caps(), env=api_env(fake)) as s:
        await configure(s)
        # what it sees, then a change in its worktree, then a write at the user's tree that the
        # command line does not show (its sandbox's only writable root is the worktree)
        escape = f"python3 -c \"open('{ws}/' + 'escape.txt', 'w').write('x')\" 2>/dev/null || echo ESCAPE-BLOCKED"
        look = f"cat README.md notes.txt; ls secret.log || echo NO-LOG; echo change > app.py; {escape}"
        fake.push(
            routed("STEP-F", calls(tool_call("bash", {"command": look}, "b1"))),
            routed("STEP-F", {"status": 400, "errorType": "invalid_request_error", "message": "bad request F"}),
            calls(tool_call("task", {"agent": "writer", "prompt": "STEP-F try"}, "t2")),
            reply("it failed"),
        )
        result = await s.execute("coder.input", {"text": "try it"})
        assert result["status"] == "completed", result
        seen = result_text(tool_results(fake.message_requests[2])["b1"])
        assert "uncommitted line" in seen and "untracked notes" in seen and "NO-LOG" in seen, seen
        assert "ESCAPE-BLOCKED" in seen and not exists(ws / "escape.txt")
        assert (ws / "app.py").read_text() == APP  # the user's tree: untouched
        text = task_text(fake, "t2")
        assert "[1] writer (failed)" in text and "/worktrees drop" in text, text
        listed = (await s.execute("coder.worktrees", {}))["data"]["worktrees"]
        assert len(listed) == 1 and (Path(listed[0]["path"]) / "app.py").read_text() == "change\n"
        all_gone = await s.execute("coder.input", {"text": "/worktrees drop --all"})
        assert all_gone["data"]["worktrees"] == [] and worktrees_of(ws) == [str(ws)]
        assert (await s.execute("coder.input", {"text": "/worktrees drop nope"}))["status"] == "failed"


async def test_a_task_step_runs_in_a_worktree_under_tasks_isolation(ws, fake):
    async with lsp_session(ws, caps=full_caps(), env=api_env(fake)) as s:
        await configure(s, tasks={"isolation": "worktree"})
        plan = {"steps": [{"id": "fix", "title": "Fix add", "prompt": "STEP-T fix add"}]}
        fake.push(
            routed("Plan how to reach", calls(tool_call("plan", plan, "p1"))),
            routed("Plan how to reach", reply("planned")),
            routed("STEP-T", calls(tool_call("bash", {"command": "pwd; sed -i 's/a - b/a + b/' app.py"}, "b2"))),
            routed("STEP-T", reply("fixed")),
            reply("# Report\nfixed add"),
        )
        result = await s.execute("coder.input", {"text": "/task fix add"})
        assert result["status"] == "completed", result
        [step] = [r for r in fake.message_requests if "b2" in tool_results(r)]
        cwd = result_text(tool_results(step)["b2"]).splitlines()[0]
        assert str(state_worktrees(ws)) in cwd, cwd  # the step ran in its worktree
        assert "return a + b" in (ws / "app.py").read_text()  # and its patch landed here
        [home] = os.listdir(state_worktrees(ws))
        assert worktrees_of(ws) == [str(ws)] and os.listdir(state_worktrees(ws) / home) == []


async def test_a_step_leaving_a_link_out_or_a_protected_file_is_refused(ws, fake, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    hostile = (
        f"ln -s {outside} out; "
        "python3 -c \"import os; d='.cl'+'aude'; os.makedirs(d, exist_ok=True); "
        "open(d+'/settings.json','w').write('{}')\"; "
        "echo ok > fine.txt"
    )
    async with lsp_session(ws, caps=full_caps(), env=api_env(fake)) as s:
        await configure(s, sandbox={"mode": "off"})  # the worktree holds whatever the step made
        fake.push(
            routed("STEP-X", calls(tool_call("bash", {"command": hostile}, "b3"))),
            routed("STEP-X", reply("done")),
            calls(tool_call("task", {"agent": "writer", "prompt": "STEP-X go"}, "t3")),
            reply("refused"),
        )
        result = await s.execute("coder.input", {"text": "go"})
        assert result["status"] == "completed", result
        text = task_text(fake, "t3")
        assert "[1] writer (failed)" in text and "refused (nothing was written)" in text, text
        assert "out: " in text and ".claude/settings.json" in text
        assert not exists(ws / "out") and not exists(ws / ".claude" / "settings.json")
        assert not exists(ws / "fine.txt")  # all or nothing
        assert list(outside.iterdir()) == []


async def test_an_open_buffer_is_the_base_and_gets_the_patch_through_the_editor(ws, fake):
    async with lsp_session(ws, caps=full_caps(), env=api_env(fake)) as s:
        await configure(s)
        unsaved = APP + "\n# the user's unsaved line\n"
        uri = s.open("app.py", unsaved, version=7)
        fake.push(
            routed("STEP-O", edit("a - b", "a + b", "eo")),
            routed("STEP-O", reply("fixed")),
            calls(tool_call("task", {"agent": "writer", "prompt": "STEP-O fix add"}, "t4")),
            reply("done"),
        )
        result = await s.execute("coder.input", {"text": "fix add"})
        assert result["status"] == "completed", result
        assert "patch was applied: app.py" in task_text(fake, "t4")
        [sent] = [e for e in s.edits if uri in str(e.edit)]
        [doc_edit] = sent.edit.document_changes
        assert doc_edit.text_document.version == 7  # against the buffer the user has
        assert [e.new_text for e in doc_edit.edits] == ["    return a + b\n"]
        assert (ws / "app.py").read_text() == APP  # an open file: the editor writes it, not the server
