"""/undo in a generated 3,000-file repository, where snapshots follow the file watcher's record
of what changed instead of scanning the workspace: every kind of change a command can make
(new folders, moves, deletions, a change of mode, a write right before it exits) is undone,
and what the user or an ignored folder did in between is not attributed to the submission."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from harness import init_git, lsp_session

FILES = 3000


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("scale") / "ws"
    files = {f"src/pkg{i // 300}/mod{i // 30}/f{i}.py": f"# file {i}\nx = {i}\n" for i in range(FILES)}
    files[".gitignore"] = "node_modules/\n"
    init_git(root, files)
    for i in range(200):
        p = root / "node_modules" / f"dep{i // 20}" / f"i{i}.js"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x\n")
    return root


@pytest.fixture
def ws(template: Path, tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    subprocess.run(["cp", "-a", str(template), str(root)], check=True)
    return root


def tree_state(root: Path) -> dict[str, tuple[bytes, int]]:
    out = {}
    for dirpath, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", ".coder")]
        for name in names:
            p = Path(dirpath) / name
            out[str(p.relative_to(root))] = (p.read_bytes(), p.stat().st_mode & 0o777)
    return out


async def test_every_kind_of_change_is_undone_in_a_large_repo(ws: Path) -> None:
    before = tree_state(ws)
    async with lsp_session(ws) as s:
        assert (await s.execute("coder.shell", {"command": "true"}))["status"] == "completed"
        script = (
            "echo changed >> src/pkg0/mod0/f0.py && rm src/pkg1/mod10/f300.py"
            " && mkdir -p new/a/b && echo n > new/a/b/n.txt && echo top > top.txt"
            " && mv src/pkg2 src/moved && chmod +x src/pkg9/mod90/f2700.py"
            " && echo dep > node_modules/dep0/added.js"
            " && (echo late >> src/pkg5/mod50/f1500.py)"
        )
        done = await s.execute("coder.shell", {"command": script})
        assert (done["status"], done["exitCode"]) == ("completed", 0), done
        assert (ws / "src" / "moved").is_dir()
        undo = await s.execute("coder.undo", {})
        assert undo["status"] == "completed"
        assert undo["data"]["conflicts"] == []
        assert "src/pkg0/mod0/f0.py" in undo["data"]["restored"]
        assert "new/a/b/n.txt" in undo["data"]["removed"] and "top.txt" in undo["data"]["removed"]
        assert not any(p.startswith("node_modules") for p in undo["data"]["removed"] + undo["data"]["restored"])
    after = tree_state(ws)
    added = (ws / "node_modules" / "dep0" / "added.js").read_text()
    assert added == "dep\n"  # ignored: never snapshotted, never undone
    after.pop("node_modules/dep0/added.js")
    assert after == before


async def test_changes_between_submissions_are_not_attributed(ws: Path) -> None:
    async with lsp_session(ws) as s:
        await s.execute("coder.shell", {"command": "true"})
        (ws / "src" / "pkg0" / "mod0" / "f0.py").write_text("user edit\n")
        (ws / "user-new.txt").write_text("mine\n")
        done = await s.execute("coder.shell", {"command": "echo agent > src/pkg1/mod10/f300.py"})
        assert done["status"] == "completed"
        undo = await s.execute("coder.undo", {})
        assert undo["data"]["restored"] == ["src/pkg1/mod10/f300.py"] and undo["data"]["removed"] == []
        assert "Nothing to undo" in (await s.execute("coder.undo", {}))["reply"]
    assert (ws / "src" / "pkg0" / "mod0" / "f0.py").read_text() == "user edit\n"
    assert (ws / "user-new.txt").read_text() == "mine\n"
    assert (ws / "src" / "pkg1" / "mod10" / "f300.py").read_text() == "# file 300\nx = 300\n"


async def test_a_workspace_with_local_changes_at_start(ws: Path) -> None:
    """The first snapshot is seeded from HEAD plus what `git status` reports as changed."""
    (ws / "src" / "pkg0" / "mod0" / "f1.py").write_text("uncommitted\n")
    (ws / "src" / "pkg0" / "mod0" / "f2.py").unlink()
    (ws / "untracked.txt").write_text("u\n")
    (ws / ".coder").mkdir()
    (ws / ".coder" / "config.json").write_text("{}")
    before = tree_state(ws)
    async with lsp_session(ws) as s:
        cmd = "echo a >> src/pkg0/mod0/f1.py; echo b > src/pkg0/mod0/f2.py; rm untracked.txt"
        await s.execute("coder.shell", {"command": cmd + "; echo c >> src/pkg9/mod99/f2999.py"})
        undo = await s.execute("coder.undo", {})
        assert undo["data"]["restored"] == ["src/pkg0/mod0/f1.py", "src/pkg9/mod99/f2999.py", "untracked.txt"]
        assert undo["data"]["removed"] == ["src/pkg0/mod0/f2.py"]
    assert tree_state(ws) == before
