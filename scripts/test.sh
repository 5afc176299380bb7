#!/usr/bin/env bash
# The test command: installs what is missing, then checks formatting and lints, compiles every
# example kernel to every target, and runs the whole test suite (the device suite on every
# device found here: the Intel OpenCL CPU device through SYCL on a machine without a GPU). The
# Python tests run on the kdsl-gpu wheel pip-installed into a fresh venv (.kdsl/venv, made by
# scripts/python-install.sh), without the variables scripts/env.sh sets, as a user has it.
# Each stage prints its time, and a summary of them ends the run (docs/testing.md).
# KDSL_LONG_TESTS=1 sizes the random runs up (fuzzgen: 200 modules instead of 50), as the GPU
# and nightly runs do.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# The tests' wheel is built from the same debug build as the Rust tests (scripts/build-wheel.sh),
# so the crates are compiled once; `scripts/demo.sh` and users get the release wheel.
export KDSL_WHEEL_PROFILE=${KDSL_WHEEL_PROFILE:-dev}
bash scripts/setup.sh
plain_path=$PATH
source scripts/env.sh

stage_times=()
# stage NAME COMMAND...: runs the command under a heading and records how long it took.
stage() {
  local name=$1
  shift
  local started=$SECONDS
  echo "== $name"
  local status=0
  "$@" || status=$?
  local took=$((SECONDS - started))
  stage_times+=("$(printf '%-26s %4d s' "$name" "$took")")
  echo "== $name: ${took} s"
  return $status
}
summary() {
  echo "== stage times"
  printf '  %s\n' "${stage_times[@]}"
}
trap summary EXIT

stage "cargo fmt --check" cargo fmt --all -- --check
stage "cargo clippy" cargo clippy --quiet --workspace --all-targets -- -D warnings
stage "examples to every target" bash scripts/compile-examples.sh target/kdsl-bundles
export KDSL_TEST_BUNDLES=$root/target/kdsl-bundles
stage "cargo test: build" cargo test --workspace --no-run --quiet
stage "cargo test: run" cargo test --workspace --no-fail-fast
# The wheel, pip-installed into a fresh venv; pytest runs there without env.sh's variables.
python_wheel() { venv_python=$(bash scripts/python-install.sh); }
stage "Python wheel (fresh venv)" python_wheel
stage "pytest" env -u KDSL_PREFIX -u LLVM_SYS_221_PREFIX -u OCL_ICD_FILENAMES -u LD_LIBRARY_PATH \
  -u KDSL_TEST_BUNDLES PATH="$plain_path" "$venv_python" -m pytest -q python/tests
