"""`/commit` end to end in a real git repository: the git state is in the prompt, the
model's `git add` and `git commit` need no permission question (balanced preset) and,
sandboxed in the git lane, none to run outside either: a real commit with zero questions;
amending, skipping hooks, changing config and pushing are denied."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from agent_e2e import APP, all_text, api_env, calls, result_text, tool_call, tool_results
from anthropic_server import reply
from harness import full_caps, init_git, lsp_session

pytestmark = pytest.mark.asyncio(loop_scope="package")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


async def test_commit_makes_a_real_commit_and_refuses_the_rest(tmp_path, fake):
    root = init_git(tmp_path / "ws", {"app.py": APP})
    (root / "app.py").write_text(APP.replace("a - b", "a + b"))
    before = git(root, "rev-parse", "HEAD")
    async with lsp_session(root, caps=full_caps(), env=api_env(fake)) as s:
        fake.push(
            calls(tool_call("bash", {"command": "git add app.py"}, "c1")),
            calls(tool_call("bash", {"command": "git commit -m 'Fix add: it subtracted'"}, "c2")),
            calls(tool_call("bash", {"command": "git commit --amend -m 'rewrite'"}, "c3")),
            calls(tool_call("bash", {"command": "git commit --no-verify -m 'skip hooks'"}, "c4")),
            calls(tool_call("bash", {"command": "git push origin HEAD"}, "c5")),
            calls(tool_call("bash", {"command": "git config user.email evil@x"}, "c6")),
            calls(tool_call("bash", {"command": "git commit --no-ver -m 'skip hooks, abbreviated'"}, "c8")),
            calls(tool_call("bash", {"command": "git commit -anm 'skip hooks, bundled'"}, "c9")),
            calls(tool_call("bash", {"command": "git commit --amen -m 'amend, abbreviated'"}, "c10")),
            calls(tool_call("bash", {"command": "git -c core.hooksPath=/dev/null commit -m 'no hooks'"}, "c11")),
            calls(tool_call("bash", {"command": "git status --short"}, "c7")),
            reply("Committed."),
        )
        # git's writes run sandboxed in the git lane: nothing to approve, nothing to run outside
        s.answer_question = lambda p: "Run outside the sandbox"
        result = await s.execute("coder.input", {"text": "/commit"})
        assert result["status"] == "completed", result
        assert [q.message for q in s.questions] == []
    prompt = result_text_of_first(fake)
    assert "M app.py" in prompt and "return a + b" in prompt and "init" in prompt  # status, diff, log
    results = tool_results(fake.message_requests[-1])
    for denied in ("c3", "c4", "c5", "c6", "c8", "c9", "c10", "c11"):
        assert "Not allowed" in result_text(results[denied]), results[denied]
    assert git(root, "log", "-1", "--format=%s") == "Fix add: it subtracted\n"
    assert git(root, "rev-parse", "HEAD~1") == before  # one new commit, not amended
    assert git(root, "status", "--porcelain") == ""


def result_text_of_first(fake) -> str:
    return all_text(fake.message_requests[0])


async def test_commit_outside_a_repository_says_so(tmp_path, fake):
    root = tmp_path / "plain"
    root.mkdir()
    async with lsp_session(root, caps=full_caps(), env=api_env(fake)) as s:
        result = await s.execute("coder.input", {"text": "/commit"})
    assert result["mode"] == "error" and "not a git repository" in result["error"]["message"], result
