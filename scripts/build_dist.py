"""Build what users install (contract section 24), into artifacts/:

    artifacts/dist/coder_ls-V-py3-none-any.whl, coder_ls-V.tar.gz   (python -m build)
    artifacts/coder-ls-vscode-V-linux-x64.vsix                      (vsce package --target)

`python -m build` makes the sdist, then the wheel from that sdist: a file the sdist forgot
fails the build instead of shipping a wheel that only works from a checkout.

The `.vsix` carries, in `server/`, the coder-ls wheel, `bundle.json`, and the wheels of every
dependency for its platform and this interpreter's CPython version, packed in one `.tar.xz`:
the wheels as downloaded weigh about 25 MB and the `.vsix` must stay under 25 MB; rewritten
uncompressed (a wheel's RECORD hashes its files, not their compressed form, so pip takes them
as they are) and compressed together, they weigh about 17 MB. The extension unpacks them with
the user's Python (`tarfile`) and installs with `pip --no-index` (editors/vscode/src/serverEnv.ts).
The packed dependencies are cached by the exact set of wheels (compressing takes minutes here).

    python scripts/build_dist.py [--python-only] [--vsix-only]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import lzma
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ART = Path(os.environ.get("CODER_ARTIFACTS", ROOT / "artifacts"))
DIST = ART / "dist"
VSCODE = ROOT / "editors" / "vscode"
SERVER = VSCODE / "server"
CACHE = Path(os.environ.get("CODER_BUILD_CACHE", Path.home() / ".cache" / "coder-ls-build"))
MAX_VSIX = 25_000_000  # the 25 MB
TARGETS = {("Linux", "x86_64"): "linux-x64", ("Linux", "aarch64"): "linux-arm64", ("Darwin", "arm64"): "darwin-arm64"}


def log(msg: str) -> None:
    print(f"==> build: {msg}", flush=True)


def version() -> str:
    sys.path.insert(0, str(ROOT))
    from coder_ls import __version__

    return __version__


def build_python() -> Path:
    """The sdist and the wheel (from the sdist) into artifacts/dist; returns the wheel."""
    v = version()
    shutil.rmtree(DIST, ignore_errors=True)
    t0 = time.monotonic()
    build = [sys.executable, "-m", "build", "--outdir", str(DIST), str(ROOT)]
    subprocess.run(build, check=True, stdout=subprocess.DEVNULL)
    wheel = DIST / f"coder_ls-{v}-py3-none-any.whl"
    for f in (wheel, DIST / f"coder_ls-{v}.tar.gz"):
        log(f"{f.relative_to(ROOT) if f.is_relative_to(ROOT) else f}: {f.stat().st_size / 1e6:.2f} MB")
    log(f"wheel and sdist in {time.monotonic() - t0:.0f} s")
    return wheel


def download_dependencies(wheel: Path, into: Path) -> list[Path]:
    """Every dependency of the wheel as a binary wheel for this interpreter and platform."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:", "--dest", str(into), str(wheel)],
        check=True,
    )
    return sorted(p for p in into.glob("*.whl") if not p.name.startswith("coder_ls-"))


def stored(whl: Path) -> bytes:
    """The wheel rewritten with uncompressed members (same files, same RECORD)."""
    out = io.BytesIO()
    with zipfile.ZipFile(whl) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = src.read(info)
            info.compress_type = zipfile.ZIP_STORED
            dst.writestr(info, data)
    return out.getvalue()


def pack_dependencies(wheels: list[Path], dest: Path) -> None:
    key = hashlib.sha256("\n".join(f"{w.name} {w.stat().st_size}" for w in wheels).encode()).hexdigest()[:16]
    cached = CACHE / f"deps-{key}.tar.xz"
    if cached.is_file():
        log(f"dependency wheels: cached {cached}")
        shutil.copyfile(cached, dest)
        return
    t0 = time.monotonic()
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_suffix(".part")
    with lzma.open(tmp, "wb", preset=9) as xz, tarfile.open(fileobj=xz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for w in wheels:
            data = stored(w)
            info = tarfile.TarInfo(w.name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    tmp.replace(cached)
    shutil.copyfile(cached, dest)
    log(f"dependency wheels packed in {time.monotonic() - t0:.0f} s")


def build_vsix(wheel: Path) -> Path:
    v = version()
    target = TARGETS.get((platform.system(), platform.machine()))
    if target is None:
        raise SystemExit(f"no VS Code target for {platform.system()} {platform.machine()}")
    py = f"{sys.version_info.major}.{sys.version_info.minor}"
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}-{sysconfig.get_platform().replace('-', '_')}"
    shutil.rmtree(SERVER, ignore_errors=True)
    SERVER.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.monotonic()
        deps = download_dependencies(wheel, Path(tmp))
        raw = sum(d.stat().st_size for d in deps)
        log(f"{len(deps)} dependency wheels for CPython {py} ({raw / 1e6:.1f} MB) in {time.monotonic() - t0:.0f} s")
        deps_name = f"deps-{tag}.tar.xz"
        pack_dependencies(deps, SERVER / deps_name)
    shutil.copyfile(wheel, SERVER / wheel.name)
    from coder_ls import PROTOCOL_VERSION

    bundle = {
        "version": v,
        "protocolVersion": PROTOCOL_VERSION,
        "wheel": wheel.name,
        "deps": deps_name,
        "python": py,
        "platform": target,
    }
    (SERVER / "bundle.json").write_text(json.dumps(bundle, indent=2) + "\n")
    log(f"server/{deps_name}: {(SERVER / deps_name).stat().st_size / 1e6:.1f} MB")
    vsix = ART / f"coder-ls-vscode-{v}-{target}.vsix"
    vsix.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["npx", "--no-install", "vsce", "package", "--no-dependencies", "--target", target, "-o", str(vsix)],
        cwd=VSCODE,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    size = vsix.stat().st_size
    log(f"{vsix}: {size / 1e6:.1f} MB (limit {MAX_VSIX / 1e6:.1f} MB)")
    with zipfile.ZipFile(vsix) as z:
        names = z.namelist()
    for need in (f"extension/server/{wheel.name}", f"extension/server/{deps_name}", "extension/server/bundle.json"):
        if need not in names:
            raise SystemExit(f"{vsix} lacks {need}")
    if size >= MAX_VSIX:
        raise SystemExit(f"{vsix} is {size / 1e6:.1f} MB, over the 25 MB limit")
    return vsix


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--python-only", action="store_true", help="the wheel and the sdist only")
    p.add_argument("--vsix-only", action="store_true", help="the .vsix from the wheel already in artifacts/dist")
    args = p.parse_args()
    if args.vsix_only:
        wheel = DIST / f"coder_ls-{version()}-py3-none-any.whl"
        if not wheel.is_file():
            raise SystemExit(f"no {wheel}: run without --vsix-only first")
    else:
        wheel = build_python()
    if not args.python_only:
        build_vsix(wheel)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
