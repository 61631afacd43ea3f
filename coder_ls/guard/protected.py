"""The paths whose content something later executes or trusts outside the sandbox: the one
list both sandbox backends keep read-only and the agent's file tools always ask about.

A name here is protected wherever it appears in a path the agent's file tools write (a
nested `.envrc` runs when a shell enters its folder, a nested `.git` is a repository). The
sandbox holds them at the workspace's top (existing or not: a missing `.mcp.json` cannot be
created) and, for `.git`, the whole directory or file (config, hooks, `commondir`,
`info/attributes`, the index).

`writable_parts` is how a directory is granted except some paths beneath it where nothing
can hold a path out of a writable one (Landlock, always; bubblewrap where a pin is not safe,
`guard/pins.py`): the directory is granted child by child, and only the children on the way
to a kept-out path are split further. The cost: no new entry can be created directly in a
split directory, and its entries cannot be renamed or removed.

The user's home has its own list (`HOME_PROTECTED`: the shell's startup files, `~/.ssh`,
`~/.gitconfig`, `~/.local/bin`, ...): what the user's shell, ssh, git and editor later run
or trust. It counts wherever the workspace is: both sandboxes keep it out of a writable
root that holds the home (people open `~` in their editor), and the agent's file tools
ask about it (`protected_reason_for`, the one question both lists answer).

What is left out and why: see docs/security.md ("What is protected").
"""

from __future__ import annotations

import functools
import os
import pwd
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path

from coder_ls.userdirs import config_dir

# name -> what later runs or trusts it (the question the file tools ask says this).
PROTECTED: dict[str, str] = {
    ".git": "git's internals (its config, hooks and commondir run code on any later git command)",
    ".gitmodules": "it names the submodules, whose .git files are protected too, and where git clones them from",
    ".coder": "the agent's own configuration (it could change its permissions, commands and skills)",
    ".claude": "Claude Code's settings, hooks and slash commands, which run outside the sandbox",
    ".mcp.json": "it names the MCP servers that MCP clients start",
    ".envrc": "direnv runs it when a shell enters the folder",
    ".vscode": "VS Code's tasks and settings can run programs when the folder opens",
    ".idea": "JetBrains run configurations and startup tasks run programs",
    ".devcontainer": "a dev container's initializeCommand runs on the host",
    ".nvim.lua": "Neovim runs it at start with 'exrc'",
    ".nvimrc": "Neovim and Vim run it at start with 'exrc'",
    ".exrc": "Vim runs it at start with 'exrc'",
    ".pre-commit-config.yaml": "pre-commit runs the hooks it names on the user's next git commit",
    ".husky": "husky's git hooks run on the user's next git commit",
}


def protected_name(parts: Iterable[str]) -> str | None:
    """The first protected name among a relative path's parts, or None."""
    for part in parts:
        if part in PROTECTED:
            return part
    return None


def reason(name: str) -> str:
    return f"it is in {name}: {PROTECTED[name]}"


_SHELL = "your shell runs it when it starts or ends"
_PATH = "a program there runs in place of the one you meant (it is on PATH)"
_EDITOR = "your editor runs code from its settings and plugins"
_TOOL = "it tells a tool which programs to run or which servers to trust"
# path under the user's home -> what later runs or trusts it.
HOME_PROTECTED: dict[str, str] = {
    **dict.fromkeys((".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases", ".profile"), _SHELL),
    **dict.fromkeys((".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".config/fish"), _SHELL),
    **dict.fromkeys((".kshrc", ".cshrc", ".tcshrc"), _SHELL),
    **dict.fromkeys((".xprofile", ".xsessionrc", ".xinitrc", ".pam_environment", ".config/environment.d"), _SHELL),
    ".ssh": "ssh trusts the keys and runs the commands its files name (authorized_keys, config)",
    ".gitconfig": "git runs the programs it names (hooks, fsmonitor, pager, filters) in every repository",
    ".config/git": "git runs the programs its config names in every repository",
    **dict.fromkeys(("bin", ".local/bin", ".cargo/bin"), _PATH),
    ".claude": "Claude Code's user settings, hooks and commands run outside the sandbox",
    ".claude.json": "Claude Code starts the MCP servers it names",
    **dict.fromkeys((".config/Code/User", ".vscode", ".vscode-server", ".config/nvim", ".vimrc", ".vim"), _EDITOR),
    **dict.fromkeys((".emacs", ".emacs.d", ".config/emacs"), _EDITOR),
    ".config/autostart": "the desktop starts what it names at login",
    ".config/systemd": "systemd runs the user services it names",
    ".config/direnv": "direnv's own settings can allow any .envrc to run",
    ".local/share/direnv": "direnv's list of the .envrc files allowed to run",
    ".gnupg": "gpg runs the programs its agent config names (pinentry)",
    **dict.fromkeys((".npmrc", ".docker/config.json", ".kube/config", ".aws/config", ".hgrc"), _TOOL),
    **dict.fromkeys((".cargo/config.toml", ".cargo/config", ".pip/pip.conf", ".config/pip"), _TOOL),
    **dict.fromkeys((".pypirc", ".netrc"), "tools send the credentials it holds to the hosts it names"),
}


@functools.lru_cache(maxsize=8)
def _home_entries(homes: tuple[str, ...], config_home: str, coder: str) -> tuple[tuple[Path, str], ...]:
    bases = {Path(os.path.normpath(h)) for h in homes if os.path.isabs(h)}
    bases |= {Path(os.path.realpath(h)) for h in bases}
    configs = {Path(os.path.normpath(config_home)), Path(os.path.realpath(config_home))} if config_home else set()
    out: dict[Path, str] = {}
    for base in sorted(bases):
        for rel, why in HOME_PROTECTED.items():
            out.setdefault(base / rel, why)
            if rel.startswith(".config/"):  # git, nvim, fish, ... follow XDG_CONFIG_HOME
                for config in configs:
                    out.setdefault(config / rel.removeprefix(".config/"), why)
    for coder_dir in {Path(os.path.normpath(coder)), Path(os.path.realpath(coder))}:
        out.setdefault(coder_dir, "the user's coder configuration (permissions, commands, skills)")
    return tuple(out.items())


def home_entries(env: Mapping[str, str] | None = None) -> tuple[tuple[Path, str], ...]:
    """(path, why) of each protected path of the user's home: under `$HOME` and the account's
    home (lexical and resolved), under `$XDG_CONFIG_HOME`, and the user's coder folder."""
    env = os.environ if env is None else env
    config_home = env.get("XDG_CONFIG_HOME") or ""
    homes = (env.get("HOME") or "", _account_home())
    return _home_entries(homes, config_home if os.path.isabs(config_home) else "", str(config_dir(env)))


def home_kept_out(tops: Iterable[Path], env: Mapping[str, str] | None = None) -> set[Path]:
    """The home's protected paths that a sandbox with these writable `tops` (resolved) must
    keep out: each one resolved (a dotfiles link is kept out at its target) that is under a
    top, or holds one (a top inside `~/.ssh` is kept out whole)."""
    tops = list(tops)
    out: set[Path] = set()
    for entry, _why in home_entries(env):
        for path in {entry, Path(os.path.realpath(entry))}:
            if any(path.is_relative_to(t) or t.is_relative_to(path) for t in tops):
                out.add(path)
    return out


def _account_home() -> str:
    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except (KeyError, OSError):
        return ""


def home_dirs(env: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """The user's home folders, resolved: `$HOME` and the account's."""
    env = os.environ if env is None else env
    found = {Path(os.path.realpath(h)) for h in (env.get("HOME") or "", _account_home()) if os.path.isabs(h)}
    return tuple(sorted(found))


def protected_reason_for(path: Path, root: Path, env: Mapping[str, str] | None = None) -> str | None:
    """Why a write to `path` must be asked about (None: an ordinary path): a protected name
    anywhere below the workspace `root` (compare resolved with resolved, or lexical with
    lexical), or a protected path of the user's home, wherever the workspace is."""
    if path.is_relative_to(root) and (name := protected_name(path.relative_to(root).parts)):
        return reason(name)
    for entry, why in home_entries(env):
        if path.is_relative_to(entry):
            return f"it is {entry}: {why}"
    return None


def submodule_gits(root: Path) -> list[Path]:
    """The `.git` files of the submodules `.gitmodules` lists (`path = sub/dir`): a nested
    repository's pointer to its git dir, which git follows like the top one."""
    try:
        text = (root / ".gitmodules").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        key, _, value = line.partition("=")
        rel = Path(os.path.normpath(value.strip().strip('"')))
        if key.strip() == "path" and value.strip() and not rel.is_absolute() and ".." not in rel.parts:
            out.append(root / rel / ".git")
    return out


def kept_out(root: Path) -> set[Path]:
    """The protected paths of the workspace `root` (resolved), existing or not, the `.git`
    of each submodule, and the real location of each that is reached through a link into
    the workspace (writes there would be writes here)."""
    out: set[Path] = set()
    for path in (*(root / name for name in PROTECTED), *submodule_gits(root)):
        out.add(path)
        real = Path(os.path.realpath(path))
        if real != path and real.is_relative_to(root):
            out.add(real)
    return out


def _strictly_under(path: Path, top: Path) -> bool:
    return path != top and path.is_relative_to(top)


def writable_parts(top: Path, keep_out: Collection[Path]) -> tuple[list[str], list[str]]:
    """(directories, files) that together cover what is under `top` except `keep_out`
    and links (a link is not granted: what it points to is not `top`'s)."""
    dirs: list[str] = []
    files: list[str] = []

    def split(folder: Path) -> None:
        if folder in keep_out:
            return
        if not any(_strictly_under(k, folder) for k in keep_out):
            dirs.append(str(folder))
            return
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            path = Path(entry.path)
            if entry.is_symlink() or path in keep_out:
                continue
            if entry.is_dir(follow_symlinks=False):
                split(path)
            else:
                files.append(str(path))

    split(top)
    return dirs, files
