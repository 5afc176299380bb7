#!/usr/bin/env bash
# The test command: installs what is missing, then checks formatting and lints, compiles every
# example kernel to every target, and runs the whole test suite (the device suite on every
# device found here: the Intel OpenCL CPU device through SYCL on a machine without a GPU). The
# Python tests run on the kdsl-gpu wheel pip-installed into a fresh venv (.kdsl/venv, made by
# scripts/python-install.sh), without the variables scripts/env.sh sets, as a user has it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bash scripts/setup.sh
plain_path=$PATH
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
echo "== Python package: pytest (python/tests) in a fresh venv holding the wheel, without env.sh"
venv_python=$(bash scripts/python-install.sh)
env -u KDSL_PREFIX -u LLVM_SYS_221_PREFIX -u OCL_ICD_FILENAMES -u LD_LIBRARY_PATH -u KDSL_TEST_BUNDLES \
  PATH="$plain_path" "$venv_python" -m pytest -q python/tests
