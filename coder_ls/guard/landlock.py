"""Landlock: the agent shell's sandbox where bubblewrap does not work.

Run as a launcher in front of a command, without `site` (only the standard library):

    python -I -S landlock.py --write DIR --write-file FILE ... [--no-network] -- ARGV...

It restricts itself (Linux Landlock, unprivileged: `PR_SET_NO_NEW_PRIVS`, then
`landlock_create_ruleset` / `landlock_add_rule` / `landlock_restrict_self`) and execs
ARGV, which inherits the restriction, as do its children: the whole filesystem stays
readable and executable, and only the given directories (everything beneath them) and
files can be written, created, removed or renamed into. With `--no-network`, a seccomp
filter refuses every socket but Unix and netlink ones (Landlock restricts TCP only, from
ABI 4: UDP would reach the host's loopback) and io_uring (which can open sockets past it);
with ABI 6 the command can neither signal processes
outside its domain (the server) nor reach abstract Unix sockets. If the kernel cannot
restrict, it says why and exits 126: a command never runs unrestricted by accident.

Landlock only grants; it cannot take a subpath back out of a granted directory. So
`sandbox.py` grants the workspace entry by entry around the protected paths
(`protected.writable_parts`; bubblewrap binds it whole and pins them, `guard/pins.py`): see
docs/security.md for what that costs here (no new top-level entries, no git writes, a
restart of the agent's shell on a new top-level entry).
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
import sys

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # same on x86_64 and arm64
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH, RULE_NET_PORT = 1, 2
PR_SET_NO_NEW_PRIVS, PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 38, 1, 24, 47, 4
LINUX_CAPABILITY_VERSION_3 = 0x20080522

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15  # ABI 2, 3, 5
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6

READ = EXECUTE | READ_FILE | READ_DIR
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # the only ones a file rule may hold


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing or disabled."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        version = _libc().syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return int(version) if version > 0 else 0


def handled_fs(version: int) -> int:
    rights = (1 << 13) - 1  # EXECUTE .. MAKE_SYM (ABI 1)
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    if version >= 5:
        rights |= IOCTL_DEV
    return rights


class LandlockError(Exception):
    pass


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_capabilities() -> None:
    """No capability survives into the command, even when the server runs as root (Landlock
    does not take them: CAP_SYS_PTRACE, CAP_NET_ADMIN, CAP_SYS_MODULE and the rest would
    stay). The bounding set needs CAP_SETPCAP to drop; without it there is nothing to drop."""
    libc = _libc()
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            last = int(f.read())
    except (OSError, ValueError):
        last = 63
    for cap in range(last + 1):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0:
            break
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(libc.capset(ctypes.byref(header), data), "drop capabilities")


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise LandlockError(f"{what}: {os.strerror(err)}")
    return result


def restrict(dirs: list[str], files: list[str], *, network: bool, version: int) -> None:
    """Restrict this process (and what it execs) to writing `dirs` (and beneath) and `files`."""
    libc = _libc()
    fs = handled_fs(version)
    net = NET_BIND_TCP | NET_CONNECT_TCP if version >= 4 and not network else 0
    scoped = SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL if version >= 6 else 0
    attr = struct.pack("=QQQ", fs, net, scoped)
    size = 24 if version >= 6 else 16 if version >= 4 else 8
    buf = ctypes.create_string_buffer(attr[:size], size)
    ruleset = _check(libc.syscall(SYS_CREATE_RULESET, buf, ctypes.c_size_t(size), ctypes.c_uint32(0)), "create ruleset")
    try:

        def allow(path: str, rights: int) -> None:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                return  # gone since the list was made: nothing to grant
            try:
                if not os.path.isdir(f"/proc/self/fd/{fd}"):
                    rights &= FILE_RIGHTS
                rule = ctypes.create_string_buffer(struct.pack("=Qi", rights & fs, fd), 12)
                kind = ctypes.c_uint32(RULE_PATH_BENEATH)
                added = libc.syscall(SYS_ADD_RULE, ruleset, kind, rule, ctypes.c_uint32(0))
                _check(added, f"grant {path}")
            finally:
                os.close(fd)

        allow("/", READ | (IOCTL_DEV if version >= 5 else 0))
        for path in dirs:
            allow(path, fs)
        for path in files:
            allow(path, FILE_RIGHTS)
        _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        _check(libc.syscall(SYS_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)), "restrict self")
    finally:
        os.close(ruleset)


# seccomp: the syscall numbers and audit arch of the architectures the filter knows.
SECCOMP_ARCHES = {"x86_64": (0xC000003E, 41, 425), "aarch64": (0xC00000B7, 198, 425)}  # arch, socket, io_uring_setup
X32_BIT = 0x40000000
AF_UNIX, AF_NETLINK = 1, 16
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
RET_ALLOW = 0x7FFF0000
LD_W_ABS, JEQ_K, JGE_K, RET_K = 0x20, 0x15, 0x35, 0x06


def _errno(code: int) -> int:
    return 0x00050000 | code  # SECCOMP_RET_ERRNO


def socket_filter(machine: str) -> bytes:
    """A classic-BPF seccomp program: `socket()` of any family but Unix and netlink fails
    with EACCES ("Permission denied", which the server reads as a sandbox failure), as do
    io_uring and system calls of another ABI (x32, 32-bit) that the filter cannot check."""
    arch, nr_socket, nr_uring = SECCOMP_ARCHES[machine]

    def op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
        return struct.pack("=HBBI", code, jt, jf, k)

    deny = _errno(errno.EACCES)
    prog = [
        op(LD_W_ABS, 4),  # arch
        op(JEQ_K, arch, 1, 0),
        op(RET_K, _errno(errno.EPERM)),
        op(LD_W_ABS, 0),  # nr
        op(JGE_K, X32_BIT, 0, 1),
        op(RET_K, _errno(errno.EPERM)),
        op(JEQ_K, nr_uring, 0, 1),
        op(RET_K, _errno(errno.EPERM)),
        op(JEQ_K, nr_socket, 1, 0),
        op(RET_K, RET_ALLOW),
        op(LD_W_ABS, 16),  # args[0], the family (low word, little endian)
        op(JEQ_K, AF_UNIX, 1, 0),
        op(JEQ_K, AF_NETLINK, 0, 1),
        op(RET_K, RET_ALLOW),
        op(RET_K, deny),
    ]
    return b"".join(prog)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def cut_network() -> None:
    """Install `socket_filter` on this process (after PR_SET_NO_NEW_PRIVS)."""
    machine = os.uname().machine
    if machine not in SECCOMP_ARCHES:
        raise LandlockError(f"cannot cut the network on {machine} (no seccomp filter for it)")
    prog = socket_filter(machine)
    buf = ctypes.create_string_buffer(prog, len(prog))
    fprog = _SockFprog(len(prog) // 8, ctypes.addressof(buf))
    _check(_libc().prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0), "seccomp filter")


def main(argv: list[str]) -> int:
    dirs: list[str] = []
    files: list[str] = []
    network = True
    i = 0
    while i < len(argv) and argv[i] != "--":
        flag = argv[i]
        if flag in ("--write", "--write-file") and i + 1 < len(argv):
            (dirs if flag == "--write" else files).append(argv[i + 1])
            i += 2
        elif flag == "--no-network":
            network = False
            i += 1
        else:
            print(f"landlock: unknown argument {flag!r}", file=sys.stderr)
            return 2
    command = argv[i + 1 :]
    if not command:
        print("landlock: no command after --", file=sys.stderr)
        return 2
    version = abi()
    if version < 1:
        print("landlock: this kernel has no Landlock; the command was not run", file=sys.stderr)
        return 126
    _libc().prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)  # die with the shell that started us
    try:
        drop_capabilities()
        restrict(dirs, files, network=network, version=version)
        if not network:
            cut_network()
    except LandlockError as exc:
        print(f"landlock: {exc}; the command was not run", file=sys.stderr)
        return 126
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"landlock: {command[0]}: {exc.strerror}", file=sys.stderr)
        return 127
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
