"""The engine serves both edges without knowing either: `coder_ls.engine` and `coder_ls.agent`
never import the ACP edge or its SDK, and the ACP edge's `initialize` path never imports
the Anthropic SDK (1-3 s; warmed in the background once a session exists)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import coder_ls

PACKAGE = Path(coder_ls.__file__).parent


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_engine_and_agent_never_import_the_acp_edge():
    offenders = []
    for sub in ("engine", "commands", "guard", "history", "agent"):
        for path in sorted((PACKAGE / sub).rglob("*.py")):
            for name in imported_modules(path):
                if name == "acp" or name.startswith(("acp.", "coder_ls.acp")):
                    offenders.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert offenders == []


def test_the_check_finds_an_acp_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from coder_ls.acp.host import AcpHost\n    import acp.schema\n")
    assert {"coder_ls.acp.host", "acp.schema"} <= imported_modules(bad)


def test_the_acp_edge_loads_without_the_anthropic_sdk_or_lsp():
    code = (
        "import sys, coder_ls.cli, coder_ls.acp.server, coder_ls.acp.host, coder_ls.lsp.logs\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('anthropic', 'pygls', 'lsprotocol'))\n"
        "print(heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, stdin=subprocess.DEVNULL
    )
    assert out.stdout.strip() == "[]"
