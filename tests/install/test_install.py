"""What users install (contract section 24): the wheel and the sdist, built as CI builds them,
installed as users install a tool (`pipx install`, `uv tool install`) into homes of their own.

The built files come from `$CODER_DIST` (a folder holding the wheel and the sdist: what
`scripts/dev dist` leaves in `artifacts/dist/`), else they are built here with `python -m
build`. Every file of the package the server reads or runs at run time is checked to be in the
wheel (the bundled skills, the scripts started by path such as `guard/landlock.py`), and no
test or benchmark file is. Each installed tool then answers `--version` (with the protocol
version) and passes `coder-ls demo`, a real LSP session against the installed server.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from coder_ls import PROTOCOL_VERSION, __version__

ROOT = Path(__file__).resolve().parents[2]
WHEEL = f"coder_ls-{__version__}-py3-none-any.whl"
SDIST = f"coder_ls-{__version__}.tar.gz"

pytestmark = pytest.mark.timeout(600)


def _tracked_package_files() -> list[str]:
    """The package's files as git knows them (what a clean checkout builds from)."""
    out = subprocess.run(["git", "ls-files", "coder_ls"], cwd=ROOT, capture_output=True, text=True, check=True)
    return sorted(p for p in out.stdout.splitlines() if p and "__pycache__" not in p)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("CODER_DIST")
    if given:
        folder = Path(given)
        assert (folder / WHEEL).is_file() and (folder / SDIST).is_file(), f"{folder} lacks {WHEEL} or {SDIST}"
        return folder
    folder = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(folder), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return folder


def test_the_wheel_carries_every_file_of_the_package_and_nothing_else(dist: Path) -> None:
    with zipfile.ZipFile(dist / WHEEL) as whl:
        names = set(whl.namelist())
    missing = [p for p in _tracked_package_files() if p not in names]
    assert not missing, f"not in the wheel: {missing}"
    assert "coder_ls/bundled/skills/verify/SKILL.md" in names
    assert "coder_ls/guard/landlock.py" in names  # started by path, as a script
    outside = sorted({n.split("/")[0] for n in names} - {"coder_ls", f"coder_ls-{__version__}.dist-info"})
    assert not outside, f"the wheel carries more than the package: {outside}"
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_the_sdist_builds_the_same_package_without_tests_or_benchmarks(dist: Path) -> None:
    with tarfile.open(dist / SDIST) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    missing = [p for p in _tracked_package_files() if p not in names]
    assert not missing, f"not in the sdist: {missing}"
    assert {"pyproject.toml", "README.md"} <= names
    tops = {n.split("/")[0] for n in names}
    assert not tops & {"tests", "benchmarks", "editors", "scripts", "docs", ".ci"}, sorted(tops)


def _check_tool(exe: Path, env: dict[str, str], tmp: Path) -> None:
    version = subprocess.run([str(exe), "--version"], capture_output=True, text=True, env=env, timeout=60)
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"coder-ls {__version__} (protocol {PROTOCOL_VERSION})"
    # the installed package, not this checkout
    where = subprocess.run(
        [
            str(exe.resolve().parent / "python"),
            "-c",
            "import coder_ls, coder_ls.commands.sources as s;"
            "print(coder_ls.__file__); print(sorted(p.name for p in s.BUNDLED.iterdir()))",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=tmp,
    )
    assert where.returncode == 0, where.stderr
    assert str(ROOT) not in where.stdout.splitlines()[0], where.stdout
    assert "'verify'" in where.stdout.splitlines()[1], "the bundled skills are not found in the installed package"
    demo = subprocess.run([str(exe), "demo"], capture_output=True, text=True, env=env, timeout=300, cwd=tmp)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    assert demo.stdout.strip().splitlines()[-1].endswith("0 failed"), demo.stdout[-2000:]


def _home(tmp: Path) -> dict[str, str]:
    """A throwaway home and a PATH without this checkout's venv; the package caches stay shared."""
    home = tmp / "home"
    home.mkdir()
    real_home = Path.home()
    venv_bin = str(Path(sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != venv_bin)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env.update(
        HOME=str(home),
        PATH=path,
        PIP_CACHE_DIR=os.environ.get("PIP_CACHE_DIR", str(real_home / ".cache" / "pip")),
        UV_CACHE_DIR=os.environ.get("UV_CACHE_DIR", str(real_home / ".cache" / "uv")),
    )
    return env


def test_pipx_installs_the_wheel(dist: Path, tmp_path: Path) -> None:
    env = _home(tmp_path)
    home = Path(env["HOME"])
    env.update(PIPX_HOME=str(home / "pipx"), PIPX_BIN_DIR=str(home / "bin"), PIPX_MAN_DIR=str(home / "man"))
    run = subprocess.run(
        [sys.executable, "-m", "pipx", "install", "--python", sys.executable, str(dist / WHEEL)],
        capture_output=True,
        text=True,
        env=env,
        timeout=480,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    _check_tool(home / "bin" / "coder-ls", env, tmp_path)


def test_uv_tool_installs_the_wheel(dist: Path, tmp_path: Path) -> None:
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    assert uv, "uv is not installed (it is in the `test` extra)"
    env = _home(tmp_path)
    home = Path(env["HOME"])
    env.update(UV_TOOL_DIR=str(home / "uv-tools"), UV_TOOL_BIN_DIR=str(home / "bin"), UV_PYTHON_DOWNLOADS="never")
    run = subprocess.run(
        [uv, "tool", "install", "--python", sys.executable, str(dist / WHEEL)],
        capture_output=True,
        text=True,
        env=env,
        timeout=480,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    _check_tool(home / "bin" / "coder-ls", env, tmp_path)
