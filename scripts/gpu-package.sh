#!/usr/bin/env bash
# Builds what a CUDA machine without Rust or LLVM needs into .carry/ (git-ignored):
# the device suite, the differential tests against the reference interpreter, and the benchmark (release, SYCL left out, CUDA loaded at run time),
# the example bundles, and the CUDA C reference kernels. scripts/gpu-run.sh runs them there.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source scripts/env.sh
rm -rf .carry && mkdir -p .carry/bundles
bash scripts/compile-examples.sh .carry/bundles
cargo build --quiet --release --no-default-features -p kdsl-bench
cp target/release/kdsl-bench-cuda target/release/kdsl-bench-launch .carry/
suite=$(cargo test --quiet --release --no-default-features -p kdsl-runtime --test suite --no-run --message-format=json \
  | python3 -c 'import json,sys; print([m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable")][-1])')
cp "$suite" .carry/device-suite
differential=$(cargo test --quiet --release --no-default-features -p kdsl-interp --test differential --no-run --message-format=json \
  | python3 -c 'import json,sys; print([m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable")][-1])')
cp "$differential" .carry/differential
strip .carry/device-suite .carry/differential .carry/kdsl-bench-cuda .carry/kdsl-bench-launch
cp crates/kdsl-bench/reference/kernels.cu .carry/
cp scripts/gpu-run.sh .carry/
du -sh .carry
