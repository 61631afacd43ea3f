"""Auto-verify: after a turn changed code, run the project's checks and show the model."""

from __future__ import annotations

from pathlib import Path

from coder_ls.protocol.config import Config

DOC_SUFFIXES = (".md", ".mdx", ".txt", ".rst", ".adoc")


def is_doc(path: str, root: Path) -> bool:
    p = Path(path)
    try:
        rel = p.relative_to(root) if p.is_absolute() else p
    except ValueError:
        rel = p
    return rel.parts[:1] == ("docs",) or rel.suffix.lower() in DOC_SUFFIXES


def verify_command(config: Config, root: Path) -> str | None:
    """The first non-empty `workflow.verifyCommands`, else one chosen by project files."""
    for command in config.workflow.verify_commands:
        if command.strip():
            return command.strip()
    if (root / "go.mod").exists():
        return "go test ./..."
    if any((root / f).exists() for f in ("pyproject.toml", "pytest.ini", "requirements.txt")):
        return "pytest"
    if (root / "package.json").exists():
        return "npm test -- --watch=false"
    return None


def is_user_verify(config: Config, command: str) -> bool:
    """The command is the user's own `workflow.verifyCommands` (not one guessed from project files).

    The turn runs it without asking, inside the sandbox: the user wrote it. Without a
    sandbox the permission policy decides as for any command.
    """
    return any(c.strip() == command for c in config.workflow.verify_commands)


def should_verify(config: Config, root: Path, changed: set[str], attempts: int, shell_allowed: bool) -> bool:
    return (
        bool(changed)
        and not all(is_doc(p, root) for p in changed)
        and config.workflow.auto_verify_after_edit
        and shell_allowed
        and attempts < config.workflow.max_verify_attempts
    )


def verify_message(command: str, output: str, exit_code: int | None, timed_out: bool) -> str:
    status = "timed out" if timed_out else f"exit code {exit_code}"
    verdict = "passed" if exit_code == 0 and not timed_out else "FAILED"
    return (
        f"<auto-verify>The files you changed were checked with `{command}` ({status}): {verdict}.\n"
        f"{output[-12000:]}\n</auto-verify>\n"
        + ("If this is a real failure caused by your change, fix it." if verdict == "FAILED" else "")
    )
