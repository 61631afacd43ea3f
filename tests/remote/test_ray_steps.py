"""`/task` steps on a Ray cluster (contract section 25, "Remote workers"), end to end: a
real coder-ls over stdio, a real local Ray cluster (head with no CPUs + one worker node,
tests/remote/conftest.py), real `coder-ls exec` on the worker, the strict fake Messages API.

- a three-step plan runs on the worker node (each step's `where` and transcript say so),
  the workers see the uncommitted changes and the patches of the steps they depend on,
  and every patch lands in the workspace;
- the API key the workers use comes from the worker node's environment through a `${}`
  reference in `runtimeEnv`: it is in no file of the Ray session (task specs, logs);
- an interrupt cancels the Ray task: the step's `coder-ls exec` stops (the fake sees its
  connection go), and the task is paused with the step pending;
- a literal key in `runtimeEnv` is refused before anything is sent.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path

import pytest
from agent_e2e import calls, tool_call
from anthropic_server import FakeAnthropicServer, reply
from harness import init_git, lsp_session
from ray_cluster import CLUSTER_KEY

# one cluster for the folder: its tests stay on one xdist worker (scripts/dev runs --dist loadgroup)
pytestmark = [pytest.mark.asyncio(loop_scope="function"), pytest.mark.timeout(300), pytest.mark.xdist_group("ray")]

PLAN = "Plan how to reach this goal"
PARENT_KEY = "test-key-of-the-parent-server"


def step(sid: str, deps: list[str] | None = None) -> dict:
    return {"id": sid, "title": f"Step {sid}", "prompt": f"do {sid.upper()} now", "dependsOn": deps or []}


def plan(*steps: dict) -> dict:
    return {"when": PLAN, **calls(tool_call("plan", {"steps": list(steps)}, "plan1"))}


def routed(when: str, spec: dict) -> dict:
    return {**spec, "when": when}


def settings(cluster, fake: FakeAnthropicServer, **executor) -> dict:
    runtime_env = {"env_vars": {"ANTHROPIC_API_KEY": "${CODER_TEST_CLUSTER_KEY}", "ANTHROPIC_BASE_URL": fake.url}}
    executor = {"kind": "ray", "address": cluster.address, "runtimeEnv": runtime_env, **executor}
    return {"permissions": "auto-edit", "tasks": {"executor": executor}}


def server_env(cluster, fake: FakeAnthropicServer) -> dict[str, str]:
    """The coder-ls server's: the parent's own key, the fake, the cluster's token."""
    return {"ANTHROPIC_API_KEY": PARENT_KEY, "ANTHROPIC_BASE_URL": fake.url, **cluster.driver_env}


def files_holding(folder: Path, text: str) -> list[str]:
    """Every file under `folder` whose bytes hold `text` (the task specs, the logs, the object spill)."""
    needle = text.encode()
    return [str(p) for p in folder.rglob("*") if p.is_file() and not p.is_socket() and needle in p.read_bytes()]


def first_text(request) -> str:
    return json.dumps(request.body["messages"][0])


async def configure(s, values: dict) -> None:
    from lsprotocol import types

    s.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"coder": values}))
    result = await s.execute("coder.new", {})
    assert result["status"] == "completed", result


async def test_three_steps_run_on_the_worker_and_their_patches_land(ray_cluster, tmp_path):
    root = init_git(tmp_path / "ws", {"app.py": "print('v1')\n", "README.md": "# demo\n"})
    (root / "app.py").write_text("print('v2, not committed')\n")  # a tracked change, uncommitted
    (root / "notes.txt").write_text("an untracked note the worker must see\n")
    with FakeAnthropicServer() as fake:
        fake.push(
            plan(step("a"), step("b"), step("c", ["a"])),
            routed(PLAN, reply("planned")),
            routed("do A now", calls(tool_call("write", {"path": "a.txt", "content": "from A\n"}, "wa"))),
            routed("do A now", reply("A wrote a.txt")),
            routed("do B now", calls(tool_call("read", {"path": "notes.txt"}, "rb"))),
            routed("do B now", calls(tool_call("write", {"path": "b.txt", "content": "from B\n"}, "wb"))),
            routed("do B now", reply("B read the note and wrote b.txt")),
            # c depends on a: its worker's tree has a's file, which an edit needs to exist
            routed("do C now", calls(tool_call("read", {"path": "a.txt"}, "rc"))),
            routed(
                "do C now",
                calls(tool_call("edit", {"path": "a.txt", "oldString": "A", "newString": "A, then C"}, "ec")),
            ),
            routed("do C now", reply("C edited a.txt")),
            routed("Write the final report", reply("# Report\nthree steps")),
        )
        async with lsp_session(root, env=server_env(ray_cluster, fake)) as s:
            await configure(s, settings(ray_cluster, fake))
            result = await s.execute("coder.input", {"text": "/task three files"})
            assert result["status"] == "completed", (result, [r.body["messages"][-1] for r in fake.message_requests])
            data = result["data"]
            assert data["completed"] == 3, data
            wheres = {st["id"]: st["where"] for st in data["steps"]}
            status = await s.execute("coder.input", {"text": f"/task status {data['id']}"})
            assert {st["id"]: st["where"] for st in status["data"]["steps"]} == wheres
    # every step ran on the worker node (the head has no CPUs)
    worker = [node for node, cpus in ray_cluster.nodes().items() if cpus]
    assert len(worker) == 1
    assert {w.split("/")[-1] for w in wheres.values()} == {worker[0][:12]}, (wheres, worker)
    assert all(w.startswith("ray:") for w in wheres.values()), wheres
    # the patches landed, c's on top of a's
    assert (root / "a.txt").read_text() == "from A, then C\n"
    assert (root / "b.txt").read_text() == "from B\n"
    assert (root / "app.py").read_text() == "print('v2, not committed')\n"  # untouched
    # each transcript says where it ran, then the worker's own events
    steps_dir = root / ".coder" / "tasks" / data["id"] / "steps"
    for sid, where in wheres.items():
        lines = (steps_dir / f"{sid}.jsonl").read_text().splitlines()
        assert json.loads(lines[0])["type"] == "ranOn" and json.loads(lines[0])["where"] == where
        ends = [json.loads(line) for line in lines[1:] if json.loads(line).get("type") == "toolCallEnd"]
        assert ends and not any(e["isError"] for e in ends), ends
    # the worker saw the uncommitted, untracked note
    b_requests = [r for r in fake.message_requests if "do B now" in first_text(r)]
    assert any("an untracked note the worker must see" in json.dumps(r.body["messages"]) for r in b_requests)
    # the steps' requests carried the cluster's key; the planner's and the report's the parent's
    keys = {("one step of a larger task" in first_text(r)): r.headers.get("x-api-key") for r in fake.message_requests}
    assert keys == {True: CLUSTER_KEY, False: PARENT_KEY}, keys
    # and it is in no file of the Ray session: not a task's argument, not a log line
    assert files_holding(ray_cluster.session_dir(), CLUSTER_KEY) == []
    # (the search can see: the reference to it is there, in the runtime env's log)
    assert files_holding(ray_cluster.session_dir(), "${CODER_TEST_CLUSTER_KEY}"), (
        "the runtime env was expected in the logs"
    )


async def test_an_interrupt_cancels_the_running_step_on_the_worker(ray_cluster, tmp_path):
    root = init_git(tmp_path / "ws", {"app.py": "print(1)\n"})
    with FakeAnthropicServer() as fake:
        fake.push(
            plan(step("slow")),
            routed(PLAN, reply("planned")),
            routed("do SLOW now", {"fault": "hang", "afterEvents": 1}),
        )
        async with lsp_session(root, env=server_env(ray_cluster, fake)) as s:
            await configure(s, settings(ray_cluster, fake))
            _, answer = s.start("coder.input", {"text": "/task one slow step"})
            await s.wait_for(lambda: any("do SLOW now" in first_text(r) for r in fake.message_requests), 120)
            running = await s.wait_for(lambda: exec_process("do SLOW now"), 10)  # on a Ray worker
            await s.execute("coder.interrupt", {})
            result = await asyncio.wait_for(answer, 30)
            assert result["status"] == "cancelled", result
            # the worker's coder-ls exec was stopped: its request to the model went away
            assert await asyncio.to_thread(fake.wait_for_disconnect, 20.0)
            assert exec_process("do SLOW now") is None, running  # the step's exec is gone
            status = await s.execute("coder.input", {"text": "/task status"})
            assert status["data"]["status"] == "paused"
            assert [st["status"] for st in status["data"]["steps"]] == ["pending"]
    assert not (root / ".coder" / "tasks" / status["data"]["id"] / "steps").exists()


def exec_process(marker: str) -> tuple[int, int] | None:
    """(pid, the pid of its grandparent: the Ray worker) of the `coder-ls exec` whose
    command line holds `marker` (exec's parent is its reaper, the reaper's the worker)."""
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            if argv[1:4] == [b"-m", b"coder_ls", b"exec"] and marker.encode() in argv[-2]:  # not its reaper
                reaper = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
                worker = int(Path(f"/proc/{reaper}/stat").read_text().rsplit(")", 1)[1].split()[1])
                if Path(f"/proc/{worker}/cmdline").read_bytes().startswith(b"ray::"):
                    return int(proc.name), worker
        except (OSError, ValueError, IndexError):
            continue
    return None


async def test_a_lost_worker_s_step_is_run_again_once(ray_cluster, tmp_path):
    root = init_git(tmp_path / "ws", {"app.py": "print(1)\n"})
    with FakeAnthropicServer() as fake:
        fake.push(
            plan(step("lost")),
            routed(PLAN, reply("planned")),
            routed("do LOST now", {"fault": "hang", "afterEvents": 1}),  # the first attempt waits here
            routed("do LOST now", calls(tool_call("write", {"path": "l.txt", "content": "second try\n"}, "wl"))),
            routed("do LOST now", reply("done on the second try")),
            routed("Write the final report", reply("# Report")),
        )
        async with lsp_session(root, env=server_env(ray_cluster, fake)) as s:
            await configure(s, settings(ray_cluster, fake))
            _, answer = s.start("coder.input", {"text": "/task survive a lost worker"})
            await s.wait_for(lambda: any("do LOST now" in first_text(r) for r in fake.message_requests), 120)
            found = await s.wait_for(lambda: exec_process("do LOST now"), 10)
            exec_pid, worker_pid = found
            os.kill(worker_pid, signal.SIGKILL)  # the Ray worker process running the step, by its id
            result = await asyncio.wait_for(answer, 180)
            assert result["status"] == "completed", result
            assert await asyncio.to_thread(fake.wait_for_disconnect, 10.0)  # the first exec went with its worker
    assert exec_process("do LOST now") is None, exec_pid  # nothing of the first attempt is left
    assert (root / "l.txt").read_text() == "second try\n"
    tries = [r for r in fake.message_requests if "do LOST now" in first_text(r)]
    assert len(tries) == 3, len(tries)  # the lost attempt, then the second's two requests
    head = json.loads(
        (root / ".coder" / "tasks" / result["data"]["id"] / "steps" / "lost.jsonl").read_text().splitlines()[0]
    )
    assert head["pid"] != worker_pid, head


async def test_a_literal_key_in_the_runtime_env_is_refused(ray_cluster, tmp_path):
    root = init_git(tmp_path / "ws", {"app.py": "print(1)\n"})
    with FakeAnthropicServer() as fake:
        fake.push(plan(step("a")), routed(PLAN, reply("planned")), routed("Write the final report", reply("# r")))
        async with lsp_session(root, env=server_env(ray_cluster, fake)) as s:
            values = settings(ray_cluster, fake)
            values["tasks"]["executor"]["runtimeEnv"]["env_vars"]["ANTHROPIC_API_KEY"] = CLUSTER_KEY
            await configure(s, values)
            result = await s.execute("coder.input", {"text": "/task leak it"})
            steps = result["data"]["steps"]
            assert [st["status"] for st in steps] == ["failed"], result
            status = await s.execute("coder.input", {"text": f"/task status {result['data']['id']}"})
            assert status["data"]["steps"][0]["where"] == "local"
        assert not any("do A now" in first_text(r) for r in fake.message_requests)
        # why is in the step's result, which the report's request carries
        assert any("must be a reference" in json.dumps(r.body) for r in fake.message_requests)
