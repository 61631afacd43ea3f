"""A deny rule for a program, tried as an attacker (issue 16): every wrapper and indirection
that runs `rm` is denied, and where the program cannot be seen (a glob or an expansion as
its name, text a shell or sed runs that is not a literal, a git alias) the line is asked
about. Ordinary lines that run no `rm` are not. Unit level: the real `decide`."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_ls.agent.policy import decide
from coder_ls.guard.safety import check_command
from coder_ls.protocol.config import Config, Rule

DENY_RM = Config(permissions="yolo", rules=[Rule(tool="bash", action="deny", command="rm")])


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    return ws


def action(command: str, root: Path) -> str:
    return decide("bash", {"command": command}, DENY_RM, None, root=root, check_command=check_command).action


DENIED = [
    "rm v",
    "script -qc 'rm v' /dev/null",
    "script --command='rm v'",
    "flock lockfile -c 'rm v'",
    "flock -w 5 lockfile --command 'rm v'",
    "sg staff -c 'rm v'",
    "rbash -c 'rm v'",
    "tcsh -c 'rm v'",
    "yash -c 'rm v'",
    "busybox sh -c 'rm v'",
    "busybox rm v",
    "toybox rm v",
    "sed -n '1e rm v' f.txt",
    "sed -e '/x/e rm v' f.txt",
    "git -c alias.x='!rm v' x",
    "git -c Alias.X='!rm v' X",
    "git config alias.y '!rm v'; git y",
    "printf 'rm v' | sh",
    "setpriv --reuid=1000 rm v",
    "unshare --user rm v",
    "systemd-run --user -p X=1 rm v",
    "env -S 'rm v'",
    "nice -n 5 timeout 9 stdbuf -oL rm v",
    "find . -name v -exec rm {} +",
    "echo v | xargs -I{} rm {}",
    "$'\\x72m' v",
    "\\rm v",
    "r''m v",
    "trap 'rm v' EXIT",
    "python3 -c 'import os; os.system(\"rm v\")'",
    'python3 -c \'import subprocess; subprocess.run(["rm", "v"])\'',
    "perl -e 'system(qq(rm v))'",
]
ASKED = [
    "/bin/r? v",
    "/usr/bin/r[m] v",
    "r* v",
    "c=RM; ${c,,} v",
    "${RM_PROGRAM} v",
    "echo v | sed 's/^/rm /e'",
    "printf '%s' 'rm v' | sh",
    "echo -e 'r\\x6d v' | sh",
    "git x",
    'git -c alias.x="$A" x',
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!rm v' git x",
]
ALLOWED = [
    "git status",
    "git -c color.ui=never log -1",
    "git commit -m 'rm the old file'",
    "sed -i -e 's/foo/bar/g' f.txt",
    "sed 's/e/E/w out.txt' f.txt",
    "ls *.py",
    "make test",
    "printf 'a\\nb\\n' > list.txt",
    "find . -name '*.py' -print",
    "echo 'rm -rf /' > note.txt",
    "ssh -c aes128-ctr host uptime",
    "python3 -c 'print(\"rmdir is not rm\")'",
    "trap 'echo bye' EXIT",
]


@pytest.mark.parametrize("command", DENIED)
def test_the_denied_program_is_caught_through_every_wrapper(command, root):
    assert action(command, root) == "deny", command


@pytest.mark.parametrize("command", ASKED)
def test_a_program_that_cannot_be_seen_is_asked_about_or_refused(command, root):
    assert action(command, root) in ("ask", "deny"), command


@pytest.mark.parametrize("command", ALLOWED)
def test_ordinary_lines_run_unasked_beside_a_deny_rule(command, root):
    assert action(command, root) == "allow", command
