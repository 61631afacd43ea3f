"""The packages stand in layers and import only downward (docs/architecture.md, "Direction").

From the top: the edges (`lsp`, `acp`, `headless`, `cli`, `wiring`, `demo`, `doctor`), then the agent, which
implements the engine's `agent_api`; the engine; the command model (`commands`); what the
engine and the agent stand on (`history`, `guard`, `llm`, `store`, `mcp`, `hooks`, `web`); and the
floor (`protocol` and the small modules `fsutil`, `environ`, `saferead`, `globs`, `userdirs`,
`configcheck`, `protocolversion`).
Inside the middle layer `history` stands on `guard` (git on a hostile repository, the trust
gate), never the other way; `isolation` (worktrees, a step's patch) stands on both.

Two checks for each package: no `import` in it names a higher package, wherever the import
stands (a function's lazy import and a `TYPE_CHECKING` one count too), and importing every
module of it alone, in a fresh interpreter, loads no module of a higher package.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import coder_ls

PACKAGE = Path(coder_ls.__file__).parent

EDGES = ("lsp", "acp", "headless", "cli", "wiring", "demo", "doctor", "__main__")
FLOOR = ("protocol", "fsutil", "environ", "saferead", "globs", "userdirs", "configcheck", "protocolversion")
MIDDLE = ("history", "guard", "llm", "store", "mcp", "hooks", "web", "isolation", "attribution", "remote")

# package -> the packages it must never import (everything above it)
ABOVE: dict[str, tuple[str, ...]] = {
    "agent": EDGES,
    "engine": ("agent", *EDGES),
    "commands": ("engine", "agent", *EDGES),
    **{name: ("commands", "engine", "agent", *EDGES) for name in MIDDLE},
    "guard": ("history", "isolation", "remote", "commands", "engine", "agent", *EDGES),
    **{name: (*MIDDLE, "commands", "engine", "agent", *EDGES) for name in FLOOR},
}


def _top(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "coder_ls" and len(parts) > 1 else None


def _files(name: str) -> list[Path]:
    folder = PACKAGE / name
    return sorted(folder.rglob("*.py")) if folder.is_dir() else [PACKAGE / f"{name}.py"]


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module an import statement of this file names (absolute and relative)."""
    here = _module_of(path).split(".")
    if path.name != "__init__.py":
        here = here[:-1]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*here[: len(here) - node.level + 1], *([base] if base else [])])
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names)
    return names


@pytest.mark.parametrize("name", sorted(ABOVE))
def test_no_import_names_a_higher_package(name):
    offenders = []
    for path in _files(name):
        for module in sorted(_imports(path)):
            if _top(module) in ABOVE[name]:
                offenders.append(f"{path.relative_to(PACKAGE)} imports {module}")
    assert offenders == []


@pytest.mark.parametrize("name", sorted(ABOVE))
def test_importing_a_package_alone_loads_nothing_above_it(name):
    modules = [_module_of(path) for path in _files(name)]
    code = (
        "import importlib, json, sys\n"
        f"for m in {modules!r}:\n"
        "    importlib.import_module(m)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('coder_ls.'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, stdin=subprocess.DEVNULL
    )
    loaded = json.loads(out.stdout)
    assert [m for m in loaded if _top(m) in ABOVE[name]] == []


def test_the_check_sees_lazy_and_relative_imports(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", tmp_path / "coder_ls")
    bad = tmp_path / "coder_ls" / "guard" / "bad.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("def f():\n    from coder_ls.engine.config import ConfigStore\n    from ..agent import runner\n")
    assert {"coder_ls.engine.config", "coder_ls.agent.runner"} <= _imports(bad)
