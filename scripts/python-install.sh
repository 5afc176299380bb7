#!/usr/bin/env bash
# Builds the kdsl Python wheel (python/build_wheel.py: maturin + the compiler module + the SYCL
# shim) and installs it into the project prefix, but only when its sources changed since the
# last install (a hash of them is kept in the prefix). Called by scripts/setup.sh.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source scripts/env.sh
python="$KDSL_PREFIX/bin/python"
stamp="$KDSL_PREFIX/.kdsl-python-wheel.sha256"
sources=$(find Cargo.toml Cargo.lock build.rs src grammar runtime-shim python/pyproject.toml python/build_wheel.py python/kdsl \
  crates/kdsl-python crates/kdsl-python-compiler crates/kdsl-runtime/src crates/kdsl-runtime/build.rs crates/kdsl-runtime/Cargo.toml \
  crates/kdsl-bundle crates/kdsl-ir crates/kdsl-frontend crates/kdsl-codegen \
  -type f -not -name '*.so' -not -path '*/__pycache__/*' -not -path '*/tests/*' -not -name '*.snap' | sort)
hash=$(printf '%s\n' $sources | xargs sha256sum | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ] && "$python" -c "import kdsl" 2>/dev/null; then
  exit 0
fi
echo "python-install: building the kdsl wheel (release) and installing it into $KDSL_PREFIX"
wheel=$("$python" python/build_wheel.py --out "${CARGO_TARGET_DIR:-$root/target}/wheels" | tail -n 1)
"$python" -m pip install -q --disable-pip-version-check --no-deps --force-reinstall "$wheel"
echo "$hash" > "$stamp"
