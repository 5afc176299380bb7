#!/usr/bin/env bash
# The test command: installs what is missing, then checks formatting and lints, compiles every
# example kernel to every target, and runs the whole test suite (the device suite on every
# device found here: the Intel OpenCL CPU device through SYCL on a machine without a GPU). The
# Python tests run on the kdsl-gpu wheel pip-installed into a fresh venv (.kdsl/venv, made by
# scripts/python-install.sh), without the variables scripts/env.sh sets, as a user has it.
# Each stage prints its time and the CPU time it used, and a summary of them ends the run; the
# run stage also lists its slowest test binaries (docs/testing.md).
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
# Sets `cpu` to the CPU seconds (user and system) of every finished child process so far, from
# `times` (run in this shell: in a subshell it would count the subshell's children only).
cpu_file=$(mktemp)
children_cpu() {
  times >"$cpu_file"
  cpu=$(tail -n 1 "$cpu_file" | awk '{ split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%.0f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }')
}
# stage NAME COMMAND...: runs the command under a heading and records how long it took, and
# the CPU time it used (on a machine shared with other work, the steadier of the two).
stage() {
  local name=$1
  shift
  local started=$SECONDS cpu cpu_before
  children_cpu
  cpu_before=$cpu
  echo "== $name"
  local status=0
  "$@" || status=$?
  local took=$((SECONDS - started))
  children_cpu
  cpu=$((cpu - cpu_before))
  stage_times+=("$(printf '%-26s %4d s  (CPU %4d s)' "$name" "$took" "$cpu")")
  echo "== $name: ${took} s (CPU ${cpu} s)"
  return $status
}
summary() {
  echo "== stage times"
  printf '  %s\n' "${stage_times[@]}"
  rm -f "$cpu_file"
}
trap summary EXIT
# Passes a `cargo test` run's output through and then lists how long each test binary took,
# longest first (from the "Running" lines cargo prints before starting each one).
binary_times() {
  local line name="" started=$EPOCHREALTIME times=()
  finish() {
    [ -z "$name" ] || times+=("$(awk -v s="$started" -v e="$EPOCHREALTIME" -v n="$name" 'BEGIN { printf "%6.1f s  %s", e - s, n }')")
  }
  while IFS= read -r line; do
    printf '%s\n' "$line"
    case $line in
      *"     Running "* | *"   Doc-tests "*)
        finish
        # "Running tests/suite.rs (target/debug/deps/suite-0123abcd)" -> "tests/suite.rs [suite]"
        name=$(sed -E 's/^ *(Running|Doc-tests) //; s/ \(.*\/([^/]*)-[0-9a-f]+\)$/ [\1]/' <<<"$line")
        started=$EPOCHREALTIME
        ;;
    esac
  done
  finish
  echo "== test binaries by time"
  printf '  %s\n' "${times[@]}" | sort -rn | head -n 15
}
run_tests() { cargo test --workspace --no-fail-fast 2>&1 | binary_times; }

stage "cargo fmt --check" cargo fmt --all -- --check
stage "cargo clippy" cargo clippy --quiet --workspace --all-targets -- -D warnings
stage "examples to every target" bash scripts/compile-examples.sh target/kdsl-bundles
export KDSL_TEST_BUNDLES=$root/target/kdsl-bundles
stage "cargo test: build" cargo test --workspace --no-run --quiet
stage "cargo test: run" run_tests
# The wheel, pip-installed into a fresh venv; pytest runs there without env.sh's variables.
python_wheel() { venv_python=$(bash scripts/python-install.sh); }
stage "Python wheel (fresh venv)" python_wheel
stage "pytest" env -u KDSL_PREFIX -u LLVM_SYS_221_PREFIX -u OCL_ICD_FILENAMES -u LD_LIBRARY_PATH \
  -u KDSL_TEST_BUNDLES PATH="$plain_path" "$venv_python" -m pytest -q python/tests
