#!/usr/bin/env bash
# Prepares target/python-carry/ for a CUDA machine without Rust, LLVM or network (Python 3.12,
# CuPy, PyTorch there): the kdsl wheel built here (abi3; its runtime module does not link LLVM),
# pytest's wheels, a bundle cache holding every kernel the Python tests, the examples
# and the launch-overhead benchmark compile (so kdsl.compile needs no compiler there), and
# run.sh, which installs the wheel with `pip install --no-deps --no-index` and runs them all.
# On the GPU machine, from the repository root: `bash target/python-carry/run.sh` (results in $OUT).
# With KDSL_UR_SOURCE=<a unified-runtime source tree> (docs/sycl-cuda.md) it also carries dpctl
# (for Python 3.12) and what builds a SYCL CUDA device there; run.sh then runs the tests on it
# too, and fails if none appears. (dpnp with its oneMKL is far over the carry limit of 64 MiB, so
# the dpnp cases are skipped there.) KDSL_CARRY_WITHOUT_COMPILER=1 carries the wheel without
# kdsl._compiler (110 MB unpacked, most of the wheel), for when the repository and the carry
# together pass that limit: the GPU machine then runs from the bundle cache, as a machine
# without LLVM does, and the tests marked `needs_compiler` skip there.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source scripts/env.sh
python="$KDSL_PREFIX/bin/python"
carry=$root/target/python-carry
rm -rf "$carry"
mkdir -p "$carry/wheels" "$carry/cache"

cp "$(bash scripts/build-wheel.sh)" "$carry/wheels/"
"$python" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
  --python-version 3.12 -d "$carry/wheels" pytest iniconfig pluggy packaging pygments

# Fill the cache with this very wheel, so the cache key (its compiler version) matches there.
site=$(mktemp -d)
trap 'rm -rf "$site"' EXIT
"$python" -m pip install -q --disable-pip-version-check --no-deps --no-index --target "$site" "$carry"/wheels/kdsl_gpu-*.whl
KDSL_CACHE_DIR=$carry/cache PYTHONPATH=$site "$python" - <<'PY'
import glob
import kdsl
paths = sorted(glob.glob("examples/*.krn") + glob.glob("crates/kdsl-bench/python/*.krn")
               + glob.glob("python/tests/kernels/*.krn"))
for path in paths:
    if "tf32" in path:
        # tf32 matrix tiles need sm_80 or later: not the default targets' sm_75.
        kdsl.compile(path=path, targets=["spirv", "ptx:sm_90", "amdgpu"])
    else:
        kdsl.compile(path=path)
print(f"cached {len(paths)} kernels for {kdsl.COMPILER_VERSION}")
PY
# (examples/python/kmeans.py compiles examples/kmeans.krn as it is: cached above.)
# The first-launch benchmark's sources (one of them made by concatenation) likewise.
KDSL_CACHE_DIR=$carry/cache PYTHONPATH=$site "$python" crates/kdsl-bench/python/first_launch.py --rounds 1 >/dev/null
# The k-means assignment benchmark's kernels (one with a definition: SPLIT=false).
KDSL_CACHE_DIR=$carry/cache PYTHONPATH=$site "$python" crates/kdsl-bench/python/kmeans_tiles.py --compile-only >/dev/null
# The tests also compile inline sources (checked mode, misuse cases): running them here once
# with the carried cache puts those bundles in it too.
KDSL_CACHE_DIR=$carry/cache PYTHONPATH=$site "$python" -m pytest -q -p no:cacheprovider python/tests >/dev/null \
  || echo "python-gpu-package: the Python tests failed here; the cache may lack some of their kernels"
if [ -n "${KDSL_CARRY_WITHOUT_COMPILER:-}" ]; then
  # The same wheel less its compiler module and that module's RECORD line.
  "$python" - "$carry"/wheels/kdsl_gpu-*.whl <<'PY'
import os
import sys
import zipfile

path = sys.argv[1]
slim = path + ".slim"
with zipfile.ZipFile(path) as full, zipfile.ZipFile(slim, "w", zipfile.ZIP_DEFLATED) as out:
    for item in full.infolist():
        if item.filename.startswith("kdsl/_compiler.") and item.filename.endswith(".so"):
            continue
        data = full.read(item.filename)
        if item.filename.endswith(".dist-info/RECORD"):
            data = b"".join(line for line in data.splitlines(keepends=True)
                            if not (line.startswith(b"kdsl/_compiler.") and b".so," in line))
        out.writestr(item, data)
os.replace(slim, path)
PY
fi
cp scripts/python-gpu-run.sh "$carry/run.sh"
if [ -n "${KDSL_UR_SOURCE:-}" ]; then
  dpctl_version=$("$python" -m pip show dpctl | sed -n 's/^Version: //p')
  "$python" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$carry/wheels" "dpctl==$dpctl_version"
  bash scripts/sycl-cuda-rig-package.sh "$KDSL_UR_SOURCE" "$carry/sycl-rig"
fi
du -sh "$carry"
