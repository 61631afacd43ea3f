"""`!cmd` safety: catastrophic commands are refused, ordinary ones are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_ls.guard.safety import check_command


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home" / "me"
    path.mkdir(parents=True)
    return path


@pytest.fixture
def root(home: Path) -> Path:
    path = home / "projects" / "app"
    (path / "sub").mkdir(parents=True)
    (path / "build").mkdir()
    return path


def refused(command: str, root: Path, home: Path, cwd: Path | None = None) -> str | None:
    return check_command(command, root, cwd=cwd, home=home)


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf build/",
        "rm -rf ./node_modules",
        "rm file.txt",
        "rm -rf build/* dist",
        "rm -rf sub/../build",
        "rm -r -- -weird-name",
        'echo "rm -rf /"',
        "echo 'rm -rf / ; mkfs /dev/sda'",
        "grep mkfs notes.txt",
        "grep -r 'shutdown' src | wc -l",
        "git clean -fd",
        "git clean -fdx && git status",
        "find . -name '*.pyc' -delete",
        "find / -name passwd",
        "dd if=/dev/zero of=disk.img bs=1M count=1",
        "make > build.log 2>&1",
        "cat notes.txt > /dev/null",
        "chmod -R u+w build",
        "chmod -R u+w .",
        "chmod -x script.sh",
        "sudo rm -rf build",
        "bash -c 'rm -rf build'",
        "rm -rf /tmp/coder-cache",
        "kill -9 1234",
        "kill -1 1234",
        "ls | xargs rm -f",
        "python -m pytest -q",
        "npm test -- --watch=false",
        "printf '%s\\n' '|' ';' '&&'",
        "mv build dist",
        "cat <<EOF > notes.md\nrm -rf /\nEOF",
        "# rm -rf / is a bad idea\necho ok",
    ],
)
def test_ordinary_commands_may_run(command: str, root: Path, home: Path) -> None:
    assert refused(command, root, home) is None


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf /",
        "rm -rf /*",
        "rm -fr ~",
        "rm -rf ~/",
        "rm -rf $HOME",
        'rm -rf "${HOME}/"',
        "rm -rf ..",
        "rm -rf ../..",
        "rm -rf ../*",
        "rm -r --no-preserve-root /",
        "rm -rf --no-preserve-root build",
        "/bin/rm -rf /usr",
        "\\rm -rf /etc",
        "rm ~/.bashrc",
        "sudo rm -rf /",
        "sudo -u root rm -rf /var",
        "env -i FOO=1 rm -rf /",
        "nice -n 10 nohup rm -rf ~",
        "timeout 10 rm -rf /",
        "echo / | xargs -0 rm -rf /",
        "bash -c 'rm -rf /'",
        'sh -c "cd / && rm -rf *"',
        "bash -lc 'rm -rf ~'",
        "eval 'rm -rf /'",
        "echo hi; rm -rf /",
        "true && rm -rf / || echo failed",
        "cat x | rm -rf /",
        "(rm -rf /)",
        "echo $(rm -rf /)",
        'echo "`rm -rf ~`"',
        "cd / && rm -rf *",
        "cd .. && rm -rf app",
        "cd .. && rm -rf *",
        'rm -rf "$PWD"',
        "mkfs.ext4 /dev/sda1",
        "mkfs -t ext4 /dev/sdb",
        "sudo wipefs -a /dev/nvme0n1",
        ":(){ :|:& };:",
        ":(){ :|: & };:",
        "bomb() { bomb | bomb & }; bomb",
        "bash -c ':(){ :|:& };:'",
        "dd if=/dev/zero of=/dev/sda bs=1M",
        "sudo dd if=image.iso of=/dev/mmcblk0",
        "cat /dev/urandom > /dev/sda",
        "echo x | sudo tee /dev/nvme0n1",
        "echo c > /proc/sysrq-trigger",
        "chmod -R 777 /",
        "sudo chown -R nobody:nogroup /",
        "chown -R me ~",
        "shutdown -h now",
        "sudo reboot",
        "halt",
        "poweroff",
        "systemctl poweroff",
        "kill -9 -1",
        "kill -KILL -1",
        "kill -s KILL -1",
        "kill -- -1",
        "find / -delete",
        "find ~ -name '*.txt' -delete",
        "find / -exec rm -rf {} +",
        "mv / /tmp/x",
        "mv /etc /tmp/etc",
        "mv ~ /tmp/home",
        "echo 'rm -rf /' | bash",
        "bash <<< 'rm -rf /'",
        "bash <<EOF\nrm -rf /\nEOF",
        "rm -rf / 'unterminated",
        'mkfs /dev/sda "oops',
    ],
)
def test_destructive_commands_are_refused(command: str, root: Path, home: Path) -> None:
    reason = refused(command, root, home)
    assert reason is not None
    assert reason.startswith("Refused: ")


def test_the_explanation_names_what_would_be_destroyed(root: Path, home: Path) -> None:
    reason = refused("rm -rf ..", root, home) or ""
    assert str(root.parent) in reason and "parent of the workspace" in reason
    assert "home directory" in (refused("rm -rf ~", root, home) or "")
    assert "fork bomb" in (refused(":(){ :|:& };:", root, home) or "")
    assert "/dev/sda" in (refused("dd if=/dev/zero of=/dev/sda", root, home) or "")


def test_targets_are_resolved_from_the_current_directory(root: Path, home: Path) -> None:
    sub = root / "sub"
    assert refused("rm -rf ../build", root, home, cwd=sub) is None
    assert refused("rm -rf ../..", root, home, cwd=sub) is not None
    assert "the workspace itself" in (refused("rm -rf ..", root, home, cwd=sub) or "")


def test_a_symlink_out_of_the_workspace_is_followed_when_deleting_through_it(root: Path, home: Path) -> None:
    (root / "link").symlink_to(home)
    assert refused("rm -rf link/", root, home) is not None
    assert refused("rm -rf link/*", root, home) is not None
    assert refused("rm link", root, home) is None  # removes only the link itself


def test_the_workspace_root_under_tmp_still_protects_its_parents(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    assert check_command("rm -rf ..", root) is not None
    assert check_command("rm -rf ../other", root) is None  # a sibling temp directory
