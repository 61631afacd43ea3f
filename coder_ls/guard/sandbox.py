"""The OS sandbox of the agent's shell, built from `sandbox.*` settings: bubblewrap where
it works, else Landlock (`guard/landlock.py`), else none (the caller warns once).

`workspace-write` (the default): the whole filesystem read-only; the workspace and each
`sandbox.writableRoots` entry writable, except the protected paths (`guard/protected.py`:
`.git` whole, `.coder`, `.claude`, `.mcp.json`, `.envrc`, ..., existing or not, the user's
home list when a writable root holds the home, and the server's own directories); a private
writable /tmp, a per-workspace writable cache directory (see `CACHE_ENV`); no network unless
`sandbox.network`; the sandbox dies with the server. `read-only`: the same without the
workspace and writable roots.

How the protected paths are kept out (`layout`): bubblewrap, for a caller that watches the
pins (the agent's shell, `engine/pinguard.py`), binds each writable root whole and lays
read-only pins, placeholders and anchors over it (`guard/pins.py`); otherwise, and under
Landlock (which cannot take a sub-path back out of a granted one), each root is granted
entry by entry around them (`protected.writable_parts`): nothing can be created at its top.

Where bubblewrap does not work (probed once per process with a trivial command), Landlock
does the same with what it can: writes only beneath granted paths, no network but Unix
sockets (TCP by Landlock ABI 4, every other socket family by a seccomp filter), no signals
to processes outside (ABI 6), but no mount or PID namespace: /tmp is the session's private
directory through TMPDIR. `CODER_SANDBOX_BACKEND` (`bwrap`, `landlock`, `none`) forces one.
With none, `available()` is False and the caller runs commands unsandboxed after warning
the user once.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from coder_ls.guard import lifetime, pins, protected
from coder_ls.guard.trust import state_dir
from coder_ls.protocol.config import NetworkDomains, SandboxConfig
from coder_ls.userdirs import user_config_path

if TYPE_CHECKING:
    from coder_ls.guard import netfwd

# Caches that tools keep under ~ (read-only in the sandbox) go to a per-workspace directory.
CACHE_ENV = ("XDG_CACHE_HOME", "npm_config_cache", "PIP_CACHE_DIR", "GOCACHE", "GOMODCACHE", "YARN_CACHE_FOLDER")


class Sandbox(msgspec.Struct, frozen=True):
    """A resolved sandbox for one shell: paths made absolute."""

    root: str
    mode: str  # "workspace-write" | "read-only"
    network: bool
    writable: tuple[str, ...]  # extra writable roots that exist
    tmp: str  # bound as /tmp (Landlock: TMPDIR)
    cache: str
    backend: str = "bwrap"  # "bwrap" | "landlock"
    # The server's own directories (its state, the user's config): never writable, even
    # under a writable root that holds them.
    private: tuple[str, ...] = ()
    # `sandbox.network` as domain rules: the network only through the server's proxy
    # (`guard/netproxy.py`, bubblewrap only); None: `network` says all or nothing.
    domains: NetworkDomains | None = None


@functools.cache
def bwrap_path() -> str | None:
    """`bwrap` when it can actually build a sandbox here (probed once)."""
    exe = shutil.which("bwrap")
    if exe is None:
        return None
    try:
        probe = subprocess.run(
            [exe, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "true"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=10,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return exe if probe.returncode == 0 else None


@functools.cache
def landlock_abi() -> int:
    from coder_ls.guard.landlock import abi

    return abi()


def backend() -> str:
    """`bwrap`, `landlock` or `none`: the best that works here, or what
    CODER_SANDBOX_BACKEND forces (a forced one that does not work here is none)."""
    forced = os.environ.get("CODER_SANDBOX_BACKEND", "").strip().lower()
    if forced == "none":
        return "none"
    if forced in ("", "bwrap") and bwrap_path() is not None:
        return "bwrap"
    if forced in ("", "landlock") and landlock_abi() >= 1:
        return "landlock"
    return "none"


def available() -> bool:
    return backend() != "none"


def cache_dir(root: Path) -> Path:
    """The per-workspace writable cache of sandboxed commands (under ~/.cache/coder-ls/sandbox,
    or the fallback of `coder_ls.userdirs` when HOME is not writable)."""
    from coder_ls.userdirs import cache_dir as user_cache_dir

    digest = hashlib.sha256(str(root).encode()).hexdigest()[:16]
    return user_cache_dir(os.environ) / "sandbox" / f"{root.name or 'root'}-{digest}"


def resolve(config: SandboxConfig, root: Path, tmp: Path, *, private: tuple[str, ...] | None = None) -> Sandbox | None:
    """The sandbox `config` asks for, or None (`off`, or no sandbox on this machine).
    `private`: `server_dirs()` as the caller already computed it (the same for the process)."""
    kind = backend()
    if config.mode == "off" or kind == "none":
        return None
    root = root.resolve()
    writable = []
    for entry in config.writable_roots:
        p = Path(os.path.expanduser(entry))
        p = (p if p.is_absolute() else root / p).resolve()
        if p.exists():
            writable.append(str(p))
    cache = cache_dir(root)
    cache.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(mode=0o700, parents=True, exist_ok=True)
    return Sandbox(
        root=str(root),
        mode=config.mode,
        network=config.network is True,  # domain rules: through the proxy only, never the whole network
        domains=_domains(config.network),
        writable=tuple(writable),
        tmp=str(tmp),
        cache=str(cache),
        backend=kind,
        private=server_dirs() if private is None else private,
    )


def _domains(network: bool | NetworkDomains) -> NetworkDomains | None:
    """Domain rules that allow something (nothing allowed is no network, no proxy)."""
    return network if isinstance(network, NetworkDomains) and network.allowed_domains else None


def server_dirs() -> tuple[str, ...]:
    """Where the server keeps what it later runs or trusts: the shells' state, trust
    records, the user's config (a writable root that holds one does not make it writable)."""
    dirs = (lifetime.run_parent(), state_dir(os.environ), user_config_path(os.environ).parent)
    return tuple(str(Path(os.path.realpath(d))) for d in dirs)


def forced_env(sb: Sandbox) -> dict[str, str]:
    """Variables set for each sandboxed command (and restored afterwards)."""
    env = {"TMPDIR": "/tmp" if sb.backend == "bwrap" else sb.tmp}
    env.update(dict.fromkeys(CACHE_ENV, sb.cache))
    env["GOCACHE"] = os.path.join(sb.cache, "go-build")
    env["GOMODCACHE"] = os.path.join(sb.cache, "go-mod")
    if sb.domains is not None and sb.backend == "bwrap":
        from coder_ls.guard import netfwd  # standard library only: no proxy imported here

        env.update(netfwd.proxy_env())
    return env


# Devices a command may write (a redirection to /dev/null, a terminal); the rest stay read-only.
WRITABLE_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx")
WRITABLE_DEVICE_DIRS = ("/dev/pts", "/dev/shm")
LAUNCHER = str(Path(__file__).with_name("landlock.py"))


def _tops(sb: Sandbox) -> list[Path]:
    return [Path(sb.root), *(Path(p) for p in sb.writable)]


def _kept_out(sb: Sandbox) -> set[Path]:
    """Every path kept out of the writable tops: the workspace's protected paths, the
    server's own directories, and the home's list where a top holds the home."""
    home = protected.home_kept_out(_tops(sb))
    return protected.kept_out(Path(sb.root)) | {Path(p) for p in sb.private} | home


def home_splits(sb: Sandbox) -> set[Path]:
    """The home folders a writable top holds (or is): granted entry by entry, never given a
    placeholder (see `guard/pins.py`)."""
    return {h for h in protected.home_dirs() if any(h.is_relative_to(t) for t in _tops(sb))}


def writable(sb: Sandbox) -> list[tuple[str, list[str], list[str]]]:
    """(top, directories, files) for each writable top (the workspace, then the writable
    roots): the parts of it a command may write, the protected paths and the server's own
    directories left out (Landlock's grants). Empty in `read-only`."""
    if sb.mode != "workspace-write":
        return []
    keep_out = _kept_out(sb)
    return [(top, *protected.writable_parts(Path(top), keep_out)) for top in (sb.root, *sb.writable)]


def layout(sb: Sandbox, holder: pins.Placeholders | None = None) -> pins.Layout:
    """bubblewrap's mounts of the writable tops. With `holder` (a caller that watches
    `Layout.held` and gives `Layout.placeholders` back), each top writable whole around pins
    and placeholders; without, each split entry by entry as Landlock has it."""
    if sb.mode != "workspace-write":
        return pins.Layout()
    return pins.plan(_tops(sb), _kept_out(sb), home_splits(sb), holder)


def landlock_grants(sb: Sandbox, extra_writable: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """(directories, files) a Landlock-sandboxed command may write."""
    dirs = [sb.tmp, sb.cache, *extra_writable, *(d for d in WRITABLE_DEVICE_DIRS if os.path.isdir(d))]
    files = [f for f in WRITABLE_DEVICES if os.path.exists(f)]
    for _top, top_dirs, top_files in writable(sb):
        dirs += top_dirs
        files += top_files
    return dirs, files


def wrap(
    sb: Sandbox,
    argv: Sequence[str],
    extra_writable: Sequence[str] = (),
    extra_args: Sequence[str] = (),
    *,
    mounts: pins.Layout | None = None,
    proxy: netfwd.Handle | None = None,
) -> list[str]:
    """`argv` run inside the sandbox: the one place that builds its command line.

    `mounts`: the writable tops' layout (`layout`); None: split entry by entry, which needs
    no watching. `extra_args`: bubblewrap options spliced after the layout's mounts and
    before the namespace options (the git lane's and the network proxy's own mounts);
    bubblewrap only."""
    if sb.backend == "landlock":
        if extra_args:
            raise ValueError("extra bubblewrap arguments for a Landlock sandbox")
        dirs, files = landlock_grants(sb, extra_writable)
        args = [sys.executable, "-I", "-S", LAUNCHER]
        for d in dirs:
            args += ["--write", d]
        for f in files:
            args += ["--write-file", f]
        if not sb.network:
            args.append("--no-network")
        return [*args, "--", *argv]
    exe = bwrap_path()
    assert exe is not None
    # Later binds go over earlier ones: /tmp first (a workspace may live under /tmp), and
    # the workspace read-only before its writable parts.
    args = [exe, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--bind", sb.tmp, "/tmp"]
    args += ["--ro-bind", sb.root, sb.root]
    for option, path in (mounts if mounts is not None else layout(sb)).mounts:
        args += [option, path, path]
    args += ["--bind", sb.cache, sb.cache]
    for p in extra_writable:
        args += ["--bind", p, p]
    args += extra_args
    if not sb.network:
        args.append("--unshare-net")
    # No capabilities inside: a server running as root would otherwise keep CAP_SYS_ADMIN
    # in the sandbox and could remount the read-only binds writable.
    args += ["--unshare-pid", "--die-with-parent", "--cap-drop", "ALL", "--"]
    if proxy is not None and not sb.network:  # the socket bound in, the forwarder before argv
        from coder_ls.guard import netfwd

        return netfwd.with_proxy(args + list(argv), proxy)
    return args + list(argv)


# Told to the model after a command failed on the sandbox, so that it knows why.
WALLS = (
    "the sandbox keeps the protected paths (" + ", ".join(protected.PROTECTED) + ", and the user's shell, "
    "ssh, git and editor files when the workspace holds the home folder) read-only, existing or not: an absent "
    "one cannot be created either; git's own writes (add, commit, checkout, stash, ...) run in the git lane, "
    "a one-shot sandbox where .git is writable but what git executes or trusts; git commands it does not "
    "take (config, worktree, submodule, network) fail on the read-only .git. "
    "Under Landlock (the fallback) no entry can be created, renamed or removed directly at the workspace's top "
    "either: create top-level files with the write tool"
)
