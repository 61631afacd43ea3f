"""What the sandbox stopped (`guard/walls.py`), read from a command's output: the offer to
run outside names it, is made even when the line exited 0, and is never made for a
protected path, whatever the output claims."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_ls.guard.walls import Stopped, Wall, stopped


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / "src").mkdir()
    return ws.resolve()


def walls(root: Path, command: str, output: str, code: int | None = 1, **kw: object) -> Stopped:
    options: dict = {"cwds": [root], "writable": (str(root), "/tmp"), "backend": "bwrap", "network": "none", **kw}
    return stopped(command, output, code, root=root, **options)


@pytest.mark.parametrize(
    ("command", "output", "path", "error"),
    [
        ("touch x", "touch: cannot touch 'x': Read-only file system\n", "x", "erofs"),
        ("touch x", "touch: cannot touch \u2018x\u2019: Read-only file system\n", "x", "erofs"),
        ("echo a > /etc/x", "bash: /etc/x: Read-only file system\n", "/etc/x", "erofs"),
        ("echo a > NOTES.md", "bash: line 1: NOTES.md: Read-only file system\n", "NOTES.md", "erofs"),
        ("echo a > NOTES.md", "/bin/bash: line 3: NOTES.md: Read-only file system\n", "NOTES.md", "erofs"),
        (
            "python3 w.py",
            "Traceback (most recent call last):\nOSError: [Errno 30] Read-only file system: '/x'\n",
            "/x",
            "erofs",
        ),
        ("python3 w.py", "PermissionError: [Errno 13] Permission denied: '/opt/y'\n", "/opt/y", "eacces"),
        ("mv a b", "mv: cannot move 'a' to 'b': Device or resource busy\n", "b", "ebusy"),
        ("node w.js", "Error: EROFS: read-only file system, open '/srv/z'\n", "/srv/z", "erofs"),
        ("sh -c 'x'", "sh: 1: cannot create out.txt: Read-only file system\n", "out.txt", "erofs"),
        ("mkdir build", "mkdir: cannot create directory 'build': Read-only file system\n", "build", "erofs"),
    ],
)
def test_the_path_is_named(root: Path, command: str, output: str, path: str, error: str) -> None:
    got = walls(root, command, output)
    assert got.walls == (Wall("path", path, error),) and got.offer
    assert path in got.named()


def test_a_wall_counts_even_when_the_line_exits_0(root: Path) -> None:
    got = walls(root, "echo x > /outside/f; echo done", "bash: line 1: /outside/f: Read-only file system\ndone\n", 0)
    assert got.offer and got.walls[0].what == "/outside/f"


def test_permission_denied_is_the_sandboxs_under_landlock_or_outside_only(root: Path) -> None:
    out = "bash: ./run.sh: Permission denied\n"
    assert walls(root, "./run.sh", out, 126).walls == (Wall("other", "bash: ./run.sh: Permission denied"),)
    assert walls(root, "./run.sh", out, 126, backend="landlock").walls == (Wall("path", "./run.sh", "eacces"),)
    assert walls(root, "touch /opt/x", "touch: cannot touch '/opt/x': Permission denied\n", 1).walls[0].kind == "path"
    assert not walls(root, "./run.sh", out, 0)  # exit 0 and only inside: nothing


@pytest.mark.parametrize(
    ("command", "output"),
    [
        ("echo x > .envrc", "bash: line 1: .envrc: Read-only file system\n"),
        ("touch .vscode/settings.json", "touch: cannot touch '.vscode/settings.json': Read-only file system\n"),
        ("git config core.pager x", "error: could not lock config file .git/config: Read-only file system\n"),
        ("cp x .git/hooks/pre-commit", "cp: cannot create regular file '.git/hooks/pre-commit': Read-only file system"),
        ("cd .git && echo x > hooks/post-checkout", "bash: line 1: hooks/post-checkout: Read-only file system\n"),
        # the output names a harmless path, the command writes a protected one
        (
            "echo x > .envrc; echo \"touch: cannot touch 'a': Read-only file system\"",
            "touch: cannot touch 'a': Read-only file system\n",
        ),
        ("echo x > .mcp.json; exit 1", "something went wrong: Operation not permitted\n"),
    ],
)
def test_a_protected_path_is_never_offered(root: Path, command: str, output: str) -> None:
    cwds = [root, root / ".git"] if command.startswith("cd .git") else [root]
    got = walls(root, command, output, 1, cwds=cwds)
    assert got and got.protected and not got.offer, got
    assert "protected" in got.named()


def test_gits_own_data_is_offered(root: Path) -> None:
    out = "fatal: Unable to create '/x/.git/index.lock': Read-only file system\n"
    got = walls(root, "git add app.py", out.replace("/x", str(root)))
    assert got.offer and got.walls[0].what.endswith(".git/index.lock")
    alternates = walls(root, "x", "bash: line 1: .git/objects/info/alternates: Read-only file system\n")
    assert alternates.protected


def test_a_reader_quoting_an_error_is_no_wall(root: Path) -> None:
    assert not walls(root, "cat notes.txt", "touch: cannot touch 'x': Read-only file system\n", 0)
    assert not walls(root, "grep -r 'Read-only' .", "a.txt: bash: x: Read-only file system\n", 0)


def test_domains_and_the_network(root: Path) -> None:
    proxy = "curl: (56) CONNECT tunnel failed\ncoder-ls proxy: evil.example is not allowed (sandbox.network)\n"
    got = walls(root, "curl https://evil.example", proxy, 56, network="domains")
    assert got.walls == (Wall("domain", "evil.example"),) and "evil.example" in got.named()
    got = walls(root, "npm install", "npm ERR! network\n", 1, network="domains", refused_domains=["Registry.NPMjs.org"])
    assert got.walls == (Wall("domain", "registry.npmjs.org"),)
    got = walls(root, "curl https://x.org", "curl: (6) Could not resolve host: x.org\n", 6)
    assert got.walls[0].kind == "network" and "Could not resolve host" in got.named()
    assert not walls(root, "curl https://x.org", "curl: (6) Could not resolve host: x.org\n", 6, network="all")


def test_nothing_stopped(root: Path) -> None:
    assert not walls(root, "make", "error: no rule to make target\n", 2)
    assert not walls(root, "true", "", 0)
    assert not walls(root, "sleep 99", "Read-only file system", None)  # timed out: no exit code


def test_a_warning_of_a_command_that_succeeded_is_no_wall(root: Path) -> None:
    out = "PytestCacheWarning: could not create cache path x: [Errno 30] Read-only file system: '/ws/.pytest_cache'\n"
    assert not walls(root, "python3 -m pytest -q", out + "1 passed\n", 0)
    assert walls(root, "python3 -m pytest -q", out, 1).walls[0].what == "/ws/.pytest_cache"


def test_an_apostrophe_in_the_message(root: Path) -> None:
    out = "sed: couldn't open temporary file ./sedAb12: Read-only file system\n"
    assert walls(root, "sed -i s/a/b/ f", out, 4).walls == (Wall("path", "./sedAb12", "erofs"),)


def test_a_placeholder_directory_holding_a_protected_name(root: Path) -> None:
    got = walls(root, "echo x > .envrc; echo done", "bash: line 1: .envrc: Is a directory\ndone\n", 0)
    assert got.protected and not got.offer
    assert not walls(root, "echo x > build", "bash: line 1: build: Is a directory\n", 1)  # an ordinary error
