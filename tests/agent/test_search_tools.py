from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from coder_ls.agent.tools.search import list_files, make_glob_tool, make_grep_tool, make_ls_tool

HAS_RG = shutil.which("rg") is not None
GREPS = {
    "fallback": make_grep_tool(find_rg=lambda: None),
    "rg": make_grep_tool(),
}
GREP_MODES = ["fallback", pytest.param("rg", marks=pytest.mark.skipif(not HAS_RG, reason="no rg"))]


def populate(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("import os\nTOKEN = 'needle'\n")
    (root / "src" / "util.ts").write_text("export const needle = 1;\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("needle = 'ignored'\n")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "dep.js").write_text("needle\n")
    (root / "README.md").write_text("A Needle in a haystack\n")
    (root / "blob.bin").write_bytes(b"needle\x00\x01")


def git_init(root: Path) -> None:
    (root / ".gitignore").write_text("build/\nnode_modules/\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "src/app.py"], cwd=root, check=True)  # one tracked, others untracked


@pytest.fixture
def repo(harness):
    populate(harness.root)
    git_init(harness.root)
    return harness


@pytest.mark.parametrize("mode", GREP_MODES)
async def test_grep_honours_gitignore(repo, mode: str) -> None:
    out = await GREPS[mode].call(repo.ctx, {"pattern": "needle"})
    assert not out.is_error
    lines = out.text.splitlines()
    assert lines == ["src/app.py", "2:TOKEN = 'needle'", "src/util.ts", "1:export const needle = 1;"]


@pytest.mark.parametrize("mode", GREP_MODES)
async def test_grep_options(repo, mode: str) -> None:
    grep = GREPS[mode]
    out = await grep.call(repo.ctx, {"pattern": "needle", "ignoreCase": True, "glob": "*.md"})
    assert out.text.splitlines() == ["README.md", "1:A Needle in a haystack"]
    out = await grep.call(repo.ctx, {"pattern": "needle", "path": "src", "glob": "*.ts"})
    assert out.text.splitlines() == ["src/util.ts", "1:export const needle = 1;"]
    out = await grep.call(repo.ctx, {"pattern": "import", "path": "src/app.py"})
    assert out.text.splitlines() == ["src/app.py", "1:import os"]
    none = await grep.call(repo.ctx, {"pattern": "absent_word"})
    assert not none.is_error and "No matches" in none.text
    bad = await grep.call(repo.ctx, {"pattern": "(unclosed"})
    assert bad.is_error
    escape = await grep.call(repo.ctx, {"pattern": "x", "path": ".."})
    assert escape.is_error and "outside the workspace" in escape.text


@pytest.mark.parametrize("mode", GREP_MODES)
async def test_grep_without_git_skips_default_dirs(harness, mode: str) -> None:
    populate(harness.root)
    (harness.root / ".coder").mkdir()
    (harness.root / ".coder" / "log.jsonl").write_text("needle\n")
    out = await GREPS[mode].call(harness.ctx, {"pattern": "needle"})
    lines = out.text.splitlines()
    assert "build/out.py" in lines  # no git: no .gitignore rules
    assert not any(line.startswith(("node_modules/", ".coder/")) for line in lines)


async def test_grep_is_capped(harness) -> None:
    (harness.root / "many.txt").write_text("hit\n" * 50)
    grep = make_grep_tool(find_rg=lambda: None, max_results=10)
    out = await grep.call(harness.ctx, {"pattern": "hit"})
    assert out.text.splitlines()[:3] == ["many.txt", "1:hit", "2:hit"]
    assert len(out.text.splitlines()) == 12 and "more than 10 matches, the rest not shown" in out.text


def test_list_files_git_and_walk(harness) -> None:
    populate(harness.root)
    walked = list_files(harness.root)
    assert "build/out.py" in walked and "node_modules/dep.js" not in walked
    git_init(harness.root)
    listed = list_files(harness.root)
    assert listed == sorted([".gitignore", "README.md", "blob.bin", "src/app.py", "src/util.ts"])


async def test_glob(repo) -> None:
    tool = make_glob_tool()
    out = await tool.call(repo.ctx, {"pattern": "**/*.py"})
    assert out.text.splitlines() == ["src/app.py"]
    out = await tool.call(repo.ctx, {"pattern": "*.{py,ts}", "path": "src"})
    assert out.text.splitlines() == ["src/app.py", "src/util.ts"]
    out = await tool.call(repo.ctx, {"pattern": "*.ts"})  # no top-level match: retried as **/*.ts
    assert out.text.splitlines()[-1] == "src/util.ts"
    none = await tool.call(repo.ctx, {"pattern": "*.rs"})
    assert "No files match" in none.text


async def test_glob_is_capped_and_sorted(harness) -> None:
    for i in range(30):
        (harness.root / f"f{i:02d}.txt").write_text("")
    out = await make_glob_tool(max_results=5).call(harness.ctx, {"pattern": "*.txt"})
    assert out.text.splitlines()[:5] == ["f00.txt", "f01.txt", "f02.txt", "f03.txt", "f04.txt"]
    assert "25 more files" in out.text


async def test_ls(repo) -> None:
    tool = make_ls_tool()
    out = await tool.call(repo.ctx, {})
    lines = out.text.splitlines()
    assert "src/" in lines and "README.md" in lines and ".git/" not in lines
    assert (await tool.call(repo.ctx, {"path": "src"})).text.splitlines() == ["app.py", "util.ts"]
    assert "not a directory" in (await tool.call(repo.ctx, {"path": "README.md"})).text
    assert "not found" in (await tool.call(repo.ctx, {"path": "nope"})).text
    assert "outside the workspace" in (await tool.call(repo.ctx, {"path": "/"})).text


@pytest.mark.parametrize("mode", GREP_MODES)
async def test_grep_searches_unsaved_buffers_as_their_files(repo, mode: str) -> None:
    """Contract section 23: an unsaved buffer is searched in place of its file (no stale disk
    match), only where grep searches that file (scope, glob, ignored and skipped folders); a
    buffer equal to the disk is the file; one too large is skipped like a file."""
    from coder_ls.agent.tools.search import MAX_GREP_FILE_BYTES
    from coder_ls.engine.host import OpenDocument

    root, docs, grep = repo.root, repo.host.docs, GREPS[mode]
    docs[root / "src" / "app.py"] = OpenDocument("import os\nTOKEN = 'changed'\nneedle_new = 1\n", 4)
    docs[root / "build" / "out.py"] = OpenDocument("needle in an ignored buffer\n", 1)
    docs[root / "node_modules" / "dep.js"] = OpenDocument("needle in a skipped buffer\n", 1)
    docs[root / "src" / "util.ts"] = OpenDocument("export const needle = 1;\n", 2)  # saved: the file
    out = await grep.call(repo.ctx, {"pattern": "needle"})
    lines = out.text.splitlines()
    assert out.unsaved and "unsaved editor buffer" in lines[-1] and "src/app.py" in lines[-1], lines
    assert lines[:-1] == ["src/app.py", "3:needle_new = 1", "src/util.ts", "1:export const needle = 1;"], lines
    stale = await grep.call(repo.ctx, {"pattern": "TOKEN = 'needle'"})
    assert stale.text.startswith("No matches") and stale.unsaved, stale.text
    other = await grep.call(repo.ctx, {"pattern": "needle", "glob": "*.ts"})
    assert not other.unsaved and "unsaved" not in other.text, other.text
    outside = await grep.call(repo.ctx, {"pattern": "needle", "path": "README.md"})
    assert not outside.unsaved, outside.text
    docs[root / "src" / "app.py"] = OpenDocument("needle\n" * (MAX_GREP_FILE_BYTES // 7 + 1), 5)
    huge = await grep.call(repo.ctx, {"pattern": "needle"})
    assert "too large to search" in huge.text and "src/app.py\n" not in huge.text, huge.text[:300]
