#!/usr/bin/env bash
# Builds the pip-installable wheel (python/build_wheel.py: maturin, the compiler module, the SYCL
# shim, auditwheel repair) into target/wheels, in the workspace's own target/ so the tests and
# the wheel share one build, and prints its path. Skips the build when the wheel there was built
# from the same sources (a hash of them is kept beside it).
# KDSL_WHEEL_PROFILE=dev (what scripts/test.sh sets) builds it from the debug build the tests use
# (debug info stripped) into target/wheels-dev, so the test command compiles the crates once;
# the default, release, is the wheel users install.
# Usage: bash scripts/build-wheel.sh [--force]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source scripts/env.sh
profile=${KDSL_WHEEL_PROFILE:-release}
case "$profile" in
  release) out=${CARGO_TARGET_DIR:-$root/target}/wheels ;;
  dev) out=${CARGO_TARGET_DIR:-$root/target}/wheels-dev ;;
  *) echo "build-wheel: KDSL_WHEEL_PROFILE must be release or dev, not $profile" >&2; exit 2 ;;
esac
stamp=$out/.sources.sha256
sources=$(find Cargo.toml Cargo.lock build.rs src grammar runtime-shim python/pyproject.toml python/README.md \
  python/build_wheel.py python/_kdsl_opencl_icd.py python/kdsl \
  crates/kdsl-python crates/kdsl-python-compiler crates/kdsl-runtime/src crates/kdsl-runtime/build.rs crates/kdsl-runtime/Cargo.toml \
  crates/kdsl-bundle crates/kdsl-ir crates/kdsl-frontend crates/kdsl-codegen \
  -type f -not -name '*.so' -not -path '*/__pycache__/*' -not -path '*/tests/*' -not -name '*.snap' | sort)
hash=$(printf '%s\n' $sources | xargs sha256sum | sha256sum | cut -d' ' -f1)
wheel=$(ls "$out"/kdsl_gpu-*.whl 2>/dev/null | head -n 1 || true)
if [ "${1:-}" != "--force" ] && [ -n "$wheel" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ]; then
  echo "$wheel"
  exit 0
fi
echo "build-wheel: building the kdsl-gpu wheel ($profile) into $out" >&2
rm -f "$stamp"
wheel=$("$KDSL_PREFIX/bin/python" python/build_wheel.py --profile "$profile" --out "$out" | tail -n 1)
echo "$hash" > "$stamp"
echo "$wheel"
