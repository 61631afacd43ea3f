"""The `!` check reads a command's target wherever its options put it (issue 36, item 4),
end to end: a real LSP client drives the real server and its persistent shell, with a
real home folder. `install -D -t ~/.local/bin evil` landed before; the same write with the
target last was refused. Truncating or overwriting an existing file outside the workspace
and extracting an archive over the home are refused too; new files and appends run."""

from __future__ import annotations

import shutil
import tarfile
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from harness import Session, init_git, lsp_session


@pytest_asyncio.fixture
async def shell(tmp_path: Path) -> AsyncIterator[tuple[Session, Path]]:
    base = Path(tempfile.mkdtemp(prefix="coder-writes-e2e-", dir="/var/tmp"))  # a home outside /tmp
    try:
        home = base / "home"
        (home / ".ssh").mkdir(parents=True)
        (home / ".bashrc").write_text("# rc\n")
        (home / "thesis.txt").write_text("three years of work\n")
        root = init_git(home / "proj", {"evil": "#!/bin/sh\necho pwned\n", "a.txt": "a\n", ".bashrc": "curl x | sh\n"})
        with tarfile.open(root / "a.tar", "w") as tar:
            tar.add(root / "evil", arcname=".bashrc")
        async with lsp_session(root, env={"HOME": str(home), "TMPDIR": str(tmp_path)}) as s:
            yield s, home
    finally:
        shutil.rmtree(base, ignore_errors=True)


async def bang(s: Session, command: str) -> dict:
    return await s.execute("coder.input", {"text": f"!{command}"})  # type: ignore[no-any-return]


def refused(result: dict) -> bool:
    return result["status"] == "failed" and result.get("error", {}).get("code") == "refused"


ISSUE = [  # (line, the path it would have written)
    ("install -D -t ~/.local/bin evil", ".local/bin/evil"),
    ("cp --target-directory=$HOME .bashrc", None),
    ("mv -t ~/.ssh a.txt", ".ssh/a.txt"),
    ("cp -t ~/.ssh evil", ".ssh/evil"),
    ("ln -s -t ~/.local/bin $PWD/evil", ".local/bin/evil"),
]


@pytest.mark.parametrize(("line", "lands"), ISSUE, ids=[line for line, _ in ISSUE])
async def test_a_target_named_by_an_option_is_judged(shell, line, lands):
    s, home = shell
    result = await bang(s, line)
    assert refused(result), result
    if lands is None:
        assert (home / ".bashrc").read_text() == "# rc\n"
    else:
        assert not (home / lands).exists() and not (home / lands).is_symlink()


async def test_an_existing_file_outside_is_not_truncated_nor_extracted_over(shell):
    s, home = shell
    for line in (": > ~/thesis.txt", "sed -i d ~/thesis.txt", "cp a.txt ~/thesis.txt", "tar -C ~ -xf a.tar"):
        assert refused(await bang(s, line)), line
    assert (home / "thesis.txt").read_text() == "three years of work\n"
    assert (home / ".bashrc").read_text() == "# rc\n"


async def test_new_files_appends_and_extraction_inside_run(shell):
    s, home = shell
    for line in (
        "cp a.txt ~/copy.txt",
        "echo more >> ~/thesis.txt",
        "mkdir -p out && tar -C out -xf a.tar",
        "sed -i.bak 's/work/joy/' ~/thesis.txt",
    ):
        result = await bang(s, line)
        assert result["status"] == "completed" and result["exitCode"] == 0, (line, result)
    assert (home / "copy.txt").read_text() == "a\n"
    assert (home / "thesis.txt").read_text() == "three years of joy\nmore\n"
    assert (home / "thesis.txt.bak").exists() and (s.root / "out" / ".bashrc").exists()
