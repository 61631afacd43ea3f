"""The VS Code extension's first start without a coder-ls (contract section 24): the time to make
its own environment from the `.vsix` (a venv with the user's Python, the dependency wheels
unpacked, `pip install --no-index` of the carried wheel), run by the extension's own code
(`editors/vscode/scripts/make-env.mjs` over `out/src/serverEnv.js`), then that environment's
`coder-ls --version`. Goal: at most 30 s here.

Needs the built `.vsix` (`python scripts/build_dist.py`, or `scripts/dev dist`) and the
extension's compiled tests (`npm run compile-tests`, which `npm test` runs).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from common import Result

ROOT = Path(__file__).resolve().parents[1]
VSCODE = ROOT / "editors" / "vscode"
GOAL_S = 30.0


def _vsix() -> Path:
    found = sorted((ROOT / "artifacts").glob("coder-ls-vscode-*.vsix"))
    if not found:
        raise RuntimeError("no artifacts/coder-ls-vscode-*.vsix: run `python scripts/build_dist.py` first")
    return found[-1]


def _once(vsix: Path) -> tuple[float, dict]:
    with tempfile.TemporaryDirectory(prefix="coder-vsix-") as tmp:
        ext = Path(tmp) / "ext"
        with zipfile.ZipFile(vsix) as z:
            z.extractall(ext, [n for n in z.namelist() if n.startswith("extension/server/")])
        storage = Path(tmp) / "storage"
        out = subprocess.run(
            ["node", str(VSCODE / "scripts" / "make-env.mjs"), str(ext / "extension" / "server"), str(storage)],
            capture_output=True, text=True, check=True, timeout=600,
        )  # fmt: skip
        made = json.loads(out.stdout.strip().splitlines()[-1])
        version = subprocess.run([made["exe"], "--version"], capture_output=True, text=True, check=True, timeout=60)
        made["version"] = version.stdout.strip()
        return float(made["seconds"]), made


async def bench_vscode_env(quick: bool) -> list[Result]:
    if not (VSCODE / "out" / "src" / "serverEnv.js").exists():
        raise RuntimeError("editors/vscode/out/ is missing: run `npm run compile-tests` in editors/vscode")
    if shutil.which("node") is None:
        raise RuntimeError("node is not installed")
    vsix = _vsix()
    samples: list[float] = []
    last: dict = {}
    for _ in range(1 if quick else 3):
        seconds, last = await asyncio.to_thread(_once, vsix)
        samples.append(seconds * 1000)
    steps = ", ".join(f"{m} at {t:.1f} s" for m, t in last["steps"])
    return [
        Result(
            "vscode_env_s",
            "VS Code first start: own environment from the .vsix (s)",
            max(samples) / 1000,
            GOAL_S,
            unit="s",
            notes=[
                f"{vsix.name} ({vsix.stat().st_size / 1e6:.1f} MB), Python {last['python']['version']} "
                f"({last['python']['path']}): {steps}; then `{last['version']}`; runs (s): "
                + ", ".join(f"{s / 1000:.1f}" for s in samples)
            ],
        )
    ]


BENCHMARKS = {"vscode_env": bench_vscode_env}
