#!/usr/bin/env bash
# Checks the kdsl-gpu wheel as a user on a machine with nothing but Python would get it: in a
# private mount namespace (root: `unshare -m`) that hides LLVM 22 (/usr/lib/llvm-22, so no llc
# or ld.lld either), libclc (/usr/lib/clc), CUDA's usual place and the project prefix, it makes
# a venv with a plain Python, pip-installs "<wheel>[sycl]" (dependencies from PyPI through pip's
# cache), and, without scripts/env.sh's variables, compiles saxpy for every default target and
# runs it on NumPy arrays on the OpenCL CPU device; then the base install (no extra: NumPy
# only, as a CUDA-only user has it): `import kdsl` works, finds no SYCL device and says why,
# and compiles for every default target.
# Not part of scripts/test.sh (it needs root and a mount namespace); run by hand after a change
# to how the wheel is built.   Usage: bash scripts/python-plain-machine.sh [WHEEL]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
wheel=${1:-$(bash scripts/build-wheel.sh)}
base_python=${KDSL_VENV_PYTHON:-$(.kdsl/prefix/bin/python -c 'import sys; print(sys._base_executable)')}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp "$wheel" "$scratch/"
cp examples/saxpy.krn "$scratch/"
cat > "$scratch/check.py" <<'PY'
import os, sys
import numpy as np
import kdsl
print("devices:", [(info.id, info.device_type, info.target) for info in kdsl.devices()])
module = kdsl.compile(path=sys.argv[1])
print("images:", module.image_names)
n = 1000
y, x = np.ones(n, np.float32), np.arange(n, dtype=np.float32)
module.saxpy[1024, 256](y, x, 2.0, n, device="sycl:cpu")
assert np.array_equal(y, 1 + 2 * np.arange(n, dtype=np.float32)), y[:8]
print("saxpy on the CPU device: correct")
PY
cat > "$scratch/check_base.py" <<'PY'
import os, sys
import kdsl
assert not kdsl.devices(), kdsl.devices()
assert "OCL_ICD_FILENAMES" not in os.environ
print("base install, no devices; notes:", kdsl.device_notes())
print("images:", kdsl.compile(path=sys.argv[1]).image_names)
PY
hidden=(/usr/lib/llvm-22 /usr/lib/clc /usr/local/cuda "$root/.kdsl/prefix")
unshare -m bash -s -- "$base_python" "$scratch" "${hidden[@]}" <<'SH'
set -euo pipefail
base_python=$1 scratch=$2
shift 2
for path in "$@"; do
  [ -d "$path" ] && mount -t tmpfs none "$path"
done
cd "$scratch"
env -i HOME="$HOME" PATH=/usr/bin:/bin "$base_python" -m venv venv
env -i HOME="$HOME" PATH=/usr/bin:/bin venv/bin/python -m pip install -q --disable-pip-version-check "$(ls kdsl_gpu-*.whl)[sycl]"
env -i HOME="$HOME" PATH=/usr/bin:/bin KDSL_CACHE_DIR="$scratch/cache" venv/bin/python check.py saxpy.krn
env -i HOME="$HOME" PATH=/usr/bin:/bin "$base_python" -m venv base
env -i HOME="$HOME" PATH=/usr/bin:/bin base/bin/python -m pip install -q --disable-pip-version-check "$(ls kdsl_gpu-*.whl)"
env -i HOME="$HOME" PATH=/usr/bin:/bin KDSL_CACHE_DIR="$scratch/cache-base" base/bin/python check_base.py saxpy.krn
SH
