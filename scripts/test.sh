#!/usr/bin/env bash
# The test command: installs what is missing, then checks formatting and lints, compiles every
# example kernel to every target, and runs the whole test suite (the device suite on every
# device found here: the Intel OpenCL CPU device through SYCL on a machine without a GPU).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bash scripts/setup.sh
source scripts/env.sh

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --quiet --workspace --all-targets -- -D warnings
echo "== compiling examples/*.krn to every target"
bash scripts/compile-examples.sh target/kdsl-bundles
echo "== cargo test"
export KDSL_TEST_BUNDLES=$root/target/kdsl-bundles
cargo test --workspace --no-fail-fast
echo "== Python package: pytest (python/tests) on the installed wheel"
bash scripts/python-install.sh
"$KDSL_PREFIX/bin/python" -m pytest -q python/tests
