"""Which lines the git lane runs (`guard/gitlane.py` `route`), on a real repository: the
everyday git writes go there; anything that could run a program the agent chose, point git
at another repository, or write into `.git` by a path of its own stays in the agent's shell."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from coder_ls.guard import gitlane

# (line, whether the lane runs it)
LANE = [
    "git add x",
    "git add -A && git commit -m 'Fix add: it subtracted'",
    "git commit -m \"$(cat <<'EOF'\nSummary line\n\nWhy it changed.\nEOF\n)\"",
    "git commit -F - <<'EOF'\nmessage\nEOF",
    "git commit -am \"$(cat <<'EOF'\nmsg\nEOF\n)\"",
    "git checkout -b feature",
    "git switch main",
    "git switch -c topic",
    "git branch topic",
    "git branch -d topic",
    "git stash",
    "git stash pop",
    "git stash push -m wip",
    "git merge --no-edit feature",
    "git merge -s ours feature",
    "git rebase main",
    "git rebase -i main",
    "git reset --hard HEAD~1",
    "git restore --staged x",
    "git rm --cached x",
    "git mv src/a.py src/b.py",
    "git tag v1",
    "git tag -a v1 -m 'release'",
    "git cherry-pick abc123",
    "git cherry-pick -s abc123",
    "git revert --no-edit HEAD",
    "git apply --index fix.patch",
    "git am < series.patch",
    "git notes add -m note",
    "git update-ref refs/heads/x HEAD",
    "git symbolic-ref HEAD refs/heads/x",
    "git add . && git status --short && git log --oneline -1",
    "git add x 2>&1; echo done",
    "git commit -qm x >/dev/null 2>&1 || true",
    "cd src && git add . && git commit -m x",
    "git -C src add a.py",
    "git -c user.name=bot -c user.email=bot@x commit -m y",
    "git -c color.ui=never -c core.pager=cat add x",
    "git --no-pager add x",
    "export GIT_AUTHOR_NAME=bot; git commit -m y",
    "GIT_AUTHOR_DATE=2020-01-01 GIT_COMMITTER_DATE=2020-01-01 git commit -m y",
    "LANG=C git commit -m y",
    'git add "$PWD/src/a.py"',
    "cat > notes/msg.txt <<'EOF'\nmsg\nEOF\ngit commit -F notes/msg.txt",
    "echo hi && git add x; true; :",
]
NOT = [
    # nothing writes: the agent's shell runs readers
    "git status",
    "git log --oneline",
    "git branch",
    "git branch -a",
    "git tag -l",
    "git stash list",
    "ls && git status",
    # programs the agent names
    "git -c core.fsmonitor='touch x' status",
    "git -c core.fsmonitor='touch x' add x",
    "git -c alias.x='!sh -c \"touch y\"' x",
    "git -c core.hooksPath=$PWD/h commit -m x",
    "git -c core.hooksPath=/tmp/h commit -m x",
    "git -c diff.external=./x add y",
    "git -c include.path=../x add y",
    "git --config-env=core.fsmonitor=X add y",
    "git rebase --exec make main",
    "git rebase --exec=make main",
    "git rebase -x make main",
    "git rebase -ix make main",
    "git merge -s evil x",
    "git merge --strategy=evil x",
    "git rebase -i --strategy=evil main",
    "git grep -Ovim foo; git add x",
    "git add x && git difftool",
    "git bisect run make",
    "git filter-branch --tree-filter 'touch x' HEAD",
    "git x",
    "git lfs track '*.bin'",
    "git add x; sh -c 'git add y'",
    "git add x; eval git add y",
    "git add x; make",
    "git add x && npm test",
    # another repository or git dir
    "git --git-dir=/tmp/x add y",
    "git --work-tree=/tmp add y",
    "git --exec-path=/tmp add y",
    "git --namespace=x add y",
    "git -C /tmp add x",
    "git -C nested add x",
    "cd nested && git add x",
    "cd .. && git add x",
    "cd /tmp && git add x",
    "cd .git && git add x",
    "cd ~ && git add x",
    "cd - && git add x",
    # the environment of git
    "export HOME=$PWD/h; git commit -m x",
    "export GIT_DIR=/tmp/x; git add x",
    "export PATH=$PWD/bin:$PATH; git add x",
    "export XDG_CONFIG_HOME=$PWD/h; git add x",
    "PATH=/x; git add y",
    "GIT_DIR=/x git add y",
    "GIT_CONFIG_PARAMETERS=\"'core.fsmonitor'='x'\" git add y",
    "declare -x PATH=/x; git add x",
    "export -n PATH; git add x",
    "printf -v PATH %s /x; git add y",
    "read PATH <<< /x; git add y",
    "git add x; ((PATH=1))",
    "for PATH in /x; do git add y; done",
    "f() { :; }; git add x",
    "git() { :; }; git add x",
    "alias git=true; git add x",
    "/usr/bin/git add x",
    "./git add x",
    "env git add x",
    "command git add x",
    "sudo git add x",
    "nice git add x",
    # the agent's variables: the lane does not have them
    "git add $FILE",
    'git commit -m "$MSG"',
    "git add ${FILE:-x}",
    "git rebase $(echo --exec=make) main",
    "git reset --hard $(git rev-parse HEAD~1)",
    "git commit -F - <<EOF\n$HOME\nEOF",
    "git commit -F - <<EOF\n$(touch x)\nEOF",
    # writes into .git by a path of its own, or outside the workspace
    "git add x; echo x > .git/config",
    "git add x > .git/commondir",
    "git hash-object -w --stdin > .git/commondir <<< x",
    "git add x > /tmp/out",
    "git add x >> ../out",
    "git diff --output=.git/commondir HEAD; git add x",
    "git checkout-index --prefix=.git/hooks/ -a",
    "git read-tree --index-output=.git/commondir HEAD",
    "git update-ref commondir HEAD",
    "git update-ref -d commondir",
    "git update-ref --stdin <<< 'update commondir HEAD'",
    "git symbolic-ref commondir refs/heads/x",
    "git add gitlink/commondir",
    # shapes the lane does not take
    "git add x &",
    "git add x | cat",
    "(git add x)",
    "{ git add x; }",
    "git add x && cat README",
    "cat README | git apply",
    "if true; then git add x; fi",
    # commands the lane leaves out
    "git config core.fsmonitor x",
    "git add x && git config core.fsmonitor x",
    "git config user.email evil@x",
    "git init",
    "git worktree add ../wt",
    "git submodule update --init",
    "git fetch",
    "git pull",
    "git push origin HEAD",
    "git commit -m x; git push",
    "git gc",
]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lane") / "ws"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "init", "-q", str(root / "nested")], check=True)
    (root / "src").mkdir()
    (root / "notes").mkdir()
    os.symlink(".git", root / "gitlink")
    return root


@pytest.mark.parametrize("line", LANE)
def test_the_lane_runs_git_writes(repo: Path, line: str) -> None:
    lane = gitlane.route(line, repo, repo)
    assert lane is not None, gitlane.why_not(line, repo, repo)
    assert lane.gitdir == str(repo / ".git") and lane.cwd == str(repo)


@pytest.mark.parametrize("line", NOT)
def test_the_agents_shell_keeps_the_rest(repo: Path, line: str) -> None:
    assert gitlane.route(line, repo, repo) is None


def test_cd_and_export_are_said_not_to_carry(repo: Path) -> None:
    for line, carries in (("cd src && git add .", True), ("export LANG=C; git add x", True), ("git add x", False)):
        lane = gitlane.route(line, repo, repo)
        assert lane is not None and lane.carries is carries, line


def test_no_lane_without_a_git_directory_of_the_workspace(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert gitlane.route("git add x", plain, plain) is None
    linked = tmp_path / "linked"  # a linked worktree or a submodule's checkout: `.git` is a file
    linked.mkdir()
    (linked / ".git").write_text("gitdir: /elsewhere\n")
    assert gitlane.route("git add x", linked, linked) is None
    real = tmp_path / "real"
    subprocess.run(["git", "init", "-q", str(real)], check=True)
    link = tmp_path / "link"
    link.mkdir()
    os.symlink(real / ".git", link / ".git")
    assert gitlane.route("git add x", link, link) is None


def test_a_cwd_inside_a_nested_repository_or_outside_gets_no_lane(repo: Path, tmp_path: Path) -> None:
    assert gitlane.route("git add x", repo, repo / "nested") is None
    assert gitlane.route("git add x", repo, tmp_path) is None
    assert gitlane.route("git add x", repo, repo / ".git") is None
    assert gitlane.route("git add x", repo, repo / "src") is not None
