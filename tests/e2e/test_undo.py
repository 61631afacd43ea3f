"""/undo after shell commands in a real git repository, and /undo --all with its confirmation."""

from __future__ import annotations

import subprocess

from e2e_support import git
from harness import init_git, lsp_session

FILES = {"a.txt": "alpha\n", "b.txt": "bravo\n", "dir/c.txt": "charlie\n"}


def _user_git_state(root) -> tuple[str, str, str, str]:
    status = git(root, "status", "--porcelain", "-uall")
    return (
        status,
        git(root, "log", "--all", "--format=%H %s"),
        git(root, "stash", "list"),
        git(root, "for-each-ref"),
    )


def _stash_something(root) -> None:
    (root / "a.txt").write_text("stashed change\n")
    subprocess.run(["git", "-C", str(root), "stash", "-q"], check=True, env={
        "PATH": "/usr/bin:/bin", "HOME": str(root.parent), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
    })  # fmt: skip


async def test_undo_walks_back_shell_changes_one_submission_at_a_time(tmp_path):
    root = init_git(tmp_path / "ws", FILES)
    _stash_something(root)
    before = _user_git_state(root)
    async with lsp_session(root) as s:
        nothing = await s.execute("coder.undo", {})
        assert nothing["status"] == "completed"
        assert "Nothing to undo" in nothing["reply"]

        await s.execute("coder.input", {"text": "!echo changed > a.txt"})
        await s.execute("coder.input", {"text": "!mkdir -p newdir && echo new > newdir/new.txt"})
        await s.execute("coder.input", {"text": "!rm dir/c.txt"})
        await s.execute("coder.input", {"text": "!ls; cat b.txt"})  # changes nothing
        assert (root / "a.txt").read_text() == "changed\n"
        assert not (root / "dir" / "c.txt").exists()

        first = await s.execute("coder.input", {"text": "/undo"})
        assert first["status"] == "completed"
        assert first["data"]["restored"] == ["dir/c.txt"] and first["data"]["removed"] == []
        assert (root / "dir" / "c.txt").read_text() == "charlie\n"
        assert (root / "newdir" / "new.txt").exists()
        assert (root / "a.txt").read_text() == "changed\n"

        second = await s.execute("coder.undo", {})
        assert second["data"]["removed"] == ["newdir/new.txt"]
        assert not (root / "newdir" / "new.txt").exists()
        assert (root / "a.txt").read_text() == "changed\n"

        third = await s.execute("coder.undo", {})
        assert third["data"]["restored"] == ["a.txt"]
        assert "a.txt" in third["reply"]
        assert (root / "a.txt").read_text() == "alpha\n"

        done = await s.execute("coder.undo", {})
        assert "Nothing to undo" in done["reply"]
        assert [(root / p).read_text() for p in FILES] == list(FILES.values())

        bad = await s.execute("coder.undo", {"args": "--everything"})
        assert (bad["mode"], bad["status"]) == ("error", "failed")

    assert _user_git_state(root) == before
    assert "stash@{0}" in before[2]
    leaked = [line for line in git(root, "status", "--porcelain", "-uall").splitlines() if ".coder/" in line]
    assert leaked == [], leaked  # coder's state, its .gitignore included, stays out of the user's git


async def test_undo_all_asks_and_declining_keeps_everything(tmp_path):
    root = init_git(tmp_path / "ws", FILES)
    async with lsp_session(root) as s:
        await s.execute("coder.input", {"text": "!echo edited >> a.txt; echo u > untracked.txt; rm b.txt"})
        s.answer_question = lambda params: "Cancel"
        declined = await s.execute("coder.undo", {"args": "--all"})
        assert declined["status"] == "completed"
        assert "not confirmed" in declined["reply"].lower() or "kept" in declined["reply"].lower()
        assert len(s.questions) == 1
        question = s.questions[0]
        assert [a.title for a in question.actions] == ["Restore to HEAD", "Cancel"]
        assert "HEAD" in question.message
        assert (root / "a.txt").read_text() == "alpha\nedited\n"
        assert (root / "untracked.txt").exists() and not (root / "b.txt").exists()

        s.answer_question = lambda params: None  # dismissed
        await s.execute("coder.input", {"text": "/undo --all"})
        assert len(s.questions) == 2
        assert (root / "untracked.txt").exists()


async def test_undo_all_confirmed_restores_head_and_removes_untracked(tmp_path):
    root = init_git(tmp_path / "ws", FILES)
    log_before = git(root, "log", "--format=%H")
    async with lsp_session(root) as s:
        await s.execute("coder.input", {"text": "!echo edited >> a.txt; mkdir -p junk && echo u > junk/u.txt"})
        await s.execute("coder.input", {"text": "!rm b.txt; git add -A"})
        s.answer_question = lambda params: "Restore to HEAD"
        result = await s.execute("coder.undo", {"args": "--all"})
        assert result["status"] == "completed"
        assert len(s.questions) == 1
        assert (root / "a.txt").read_text() == "alpha\n"
        assert (root / "b.txt").read_text() == "bravo\n"
        assert not (root / "junk").exists()
        assert "junk/u.txt" in result["data"]["removed"]
        assert {"a.txt", "b.txt"} <= set(result["data"]["restored"])
        # the server's own state survives
        assert (root / ".coder").is_dir()
        assert (await s.execute("coder.sessions", {}))["status"] == "completed"
    status = [line for line in git(root, "status", "--porcelain").splitlines() if ".coder" not in line]
    assert status == []
    assert git(root, "log", "--format=%H") == log_before
