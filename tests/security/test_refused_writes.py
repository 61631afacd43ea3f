"""Writes the refused-command check reads from a tool's options (issue 36, item 4), and the
cheap classes the issue names: an existing file outside the workspace truncated or
overwritten, an archive extracted over the home, a container given `/`, a kill of every
process, a remount. Both sides are measured: the ordinary forms next to each one run.

The home is a real folder (under /var/tmp: a home under /tmp would be a temp folder) with
real files, so "an existing file" is what is on disk, as the check sees it."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from coder_ls.guard.safety import check_command


@pytest.fixture(scope="module")
def home() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="coder-writes-", dir="/var/tmp"))
    home = base / "home"
    for rel in ("proj/.git/HEAD", "proj/src/a.py", "thesis.txt", "f", ".bashrc", "old.txt", "x", "Documents/d.txt"):
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text("kept\n")
    (home / ".cache" / "tool").mkdir(parents=True)
    (home / ".cache" / "tool" / "state").write_text("cache\n")
    (home / "Downloads").mkdir()
    (home / "proj-copy").mkdir()
    yield home
    shutil.rmtree(base, ignore_errors=True)


def check(line: str, home: Path) -> str | None:
    root = home / "proj"
    return check_command(line, root, cwd=root, home=home, env={"HOME": str(home), "TMPDIR": "/tmp"})


TARGET_OPTIONS = [  # the five, and the forms of the same grammar
    "cp --target-directory=$HOME .bashrc",
    "install -D -t ~/.local/bin evil",
    "mv -t ~/.ssh authorized_keys",
    "cp -t ~/.ssh authorized_keys",
    "ln -s -t ~/.local/bin $PWD/evil",
    "cp --target-directory ~/.ssh authorized_keys",
    "cp --target ~/.ssh authorized_keys",  # an abbreviation getopt_long takes
    "cp -vt ~/.ssh authorized_keys",
    "install -Dt ~/.local/bin evil",
    "install -m755 -Dt ~/.local/bin evil",
    "cp -T evil ~/.bashrc",
    "mv --no-target-directory evil ~/.profile",
    "ln -sf -t ~/.config/autostart $PWD/x.desktop",
    "cp -a -t ~/.config/git hooks",
    "rsync -a hooks ~/.config/git/",
    "rsync -a --backup-dir ~/.ssh src/ dest/",
    "rsync -a --backup-dir=$HOME/.local/bin src/ dest/",
    "tar -xf a.tar -C ~",
    "tar -C ~ -xf a.tar",
    "tar xzf a.tgz -C ~",
    "tar --extract --file a.tar --directory ~",
    "tar -xf a.tar --directory=$HOME/.ssh",
    "tar -C ~/.config -xzf a.tgz",
    "tar -xPf a.tar",
    "sudo tar -C /usr/local -xzf go.tar.gz",  # a write under /usr, as `cp x /usr/local/bin/ls` is
    "cd ~ && tar xf a.tar",
    "unzip -d ~ a.zip",
    "unzip -o a.zip -d ~/.local",
    "cpio -idv -D ~ < a.cpio",
    "cpio -p ~ < list",
]

OVERWRITES = [
    ": > ~/thesis.txt",
    "> ~/f",
    "echo x >| ~/f",
    "ls &> ~/old.txt",
    "truncate -s0 ~/f",
    "sed -i d ~/f",
    "sed -Ei 's/a/b/' ~/f",
    "perl -pi -e 's/a/b/' ~/f",
    "cp x ~/f",
    "cp x ~/",  # ~/x exists
    "cp src/a.py ~/Documents/d.txt",
    "install x ~/old.txt",
    "dd if=/dev/zero of=~/f",
    "tee ~/f < x",
    "mv x ~/f",
    "mv ~/old.txt ~/thesis.txt",
    "ln -sf x ~/f",
    "rsync x ~/f",
]

HOST = [
    "docker run -v /:/h alpine",
    "docker run --rm -v $HOME:/h alpine sh",
    "podman run --volume=/etc:/etc alpine",
    "docker run --mount type=bind,source=/,target=/host alpine",
    "docker container run -v ~/.ssh:/root/.ssh alpine",
    "pkill -9 .",
    "pkill -f .",
    "pkill ''",
    "pkill -v node",
    "killall -r '.*'",
    "mount -o remount,ro /",
    "mount --options remount,rw /usr",
    "mount --bind /tmp/x /etc",
    "umount -a",
    "umount -l /",
]

ORDINARY = [
    "cp notes.txt ~/new-notes.txt",  # a new file outside: the user's to make
    "cp -r src ~/proj-copy",  # into an existing folder: src is new there
    "cp src/a.py ~/Downloads/",
    "tar czf ~/backup.tgz src",
    "echo done >> ~/thesis.txt",  # appending loses nothing
    "echo x > /tmp/out.txt",
    "echo x > ~/.cache/tool/state",
    "sed -i.bak d ~/f",  # the original is kept
    "perl -pi.orig -e 's/a/b/' ~/f",
    "cp -n x ~/f",
    "cp --no-clobber x ~/f",
    "cp -b x ~/f",
    "mv -i x ~/f",
    "ln -s x ~/f-link",
    "tee -a ~/f < x",
    "tar -xzf a.tgz",
    "tar -C build -xf a.tar",
    "tar xf a.tar -C /tmp/unpack",
    "tar -xf a.tar -C ~/Downloads",
    "tar -C ~/.local/share -xf fonts.tar",
    "tar -tf a.tar -C ~",
    "tar -xOf a.tar > out.txt",
    "tar -C /opt/tools -xzf go.tar.gz",
    "tar --one-top-level -C ~ -xzf pkg.tgz",
    "unzip -l a.zip -d ~",
    "unzip a.zip -d data",
    "unzip -o a.zip -d /tmp/x",
    "cpio -idv < a.cpio",
    "cpio -t < a.cpio",
    "rsync -a src/ build/",
    "rsync -av build/ user@host:/srv/app",
    "rsync -a src/ ~/Documents/backup/",
    "rsync -n -a x ~/.ssh/",
    "install -d ~/.local/share/app",
    "docker run --rm -v $PWD:/app -w /app node npm test",
    "docker run -v ~/.m2:/root/.m2 maven",
    "docker run -v /var/run/docker.sock:/var/run/docker.sock x",
    "docker run -v /:/host:ro alpine ls /host",
    "docker run -v data:/var/lib/postgresql/data postgres",
    "docker run --mount type=bind,source=/,target=/h,readonly alpine",
    "pkill -f 'node server.js'",
    "pkill -9 -x .",
    "killall node",
    "pkill -P 1234 .",
    "mount /dev/sdb1 /mnt/usb",
    "mount",
    "umount /mnt/usb",
    "mount -o remount,rw /mnt/usb",
    "cp --target-directory=~/.ssh a.txt",  # bash leaves a glued `~` alone: a folder `~` in the cwd
    "cp -t~/.local/bin a.txt",
]


@pytest.mark.parametrize("line", TARGET_OPTIONS + OVERWRITES + HOST)
def test_refused(home, line):
    assert check(line, home), line


@pytest.mark.parametrize("line", ORDINARY)
def test_runs(home, line):
    assert check(line, home) is None, check(line, home)


def test_a_file_that_does_not_exist_yet_is_a_new_file(home):
    assert check(": > ~/not-yet.txt", home) is None
    assert check("cp x ~/not-yet.txt", home) is None
    assert check(": > ~/thesis.txt", home) and "an existing file" in str(check(": > ~/thesis.txt", home))
