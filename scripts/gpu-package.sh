#!/usr/bin/env bash
# Builds what a CUDA machine without Rust or LLVM needs into .carry/ (git-ignored):
# the device suite, the differential tests against the reference interpreter, and the benchmark (release, SYCL left out, CUDA loaded at run time),
# the example bundles, and the CUDA C reference kernels. scripts/gpu-run.sh runs them there.
# With KDSL_UR_SOURCE=<a unified-runtime source tree> (docs/sycl-cuda.md) the binaries include
# the SYCL backend and .carry/sycl-rig holds what builds a SYCL CUDA device there; gpu-run.sh
# then runs the suites on it too, and fails if none appears.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source scripts/env.sh
rm -rf .carry && mkdir -p .carry/bundles
bash scripts/compile-examples.sh .carry/bundles
# The matrix-group and tile-copy kernels without their sm_90a image: an H200 then runs the sm_90
# one, whose tiles are copied by plain loads and stores and whose
# matrix groups take mma.sync per warp (gpu-run.sh's second differential run).
mkdir -p .carry/bundles-sm90/tests
for source in examples/*wgmma*.krn tests/kernels/*group*.krn tests/kernels/tile_copies.krn; do
  case $source in examples/*) folder=.carry/bundles-sm90 ;; *) folder=.carry/bundles-sm90/tests ;; esac
  target/debug/kdsl compile "$source" --target spirv,ptx --arch sm_75,sm_90 -o "$folder/$(basename "$source" .krn).kbundle"
done
if [ -n "${KDSL_UR_SOURCE:-}" ]; then
  features=(--features sycl)
  bench_features=(--features sycl)
else
  features=(--no-default-features)
  bench_features=()
fi
cargo build --quiet --release "${bench_features[@]}" -p kdsl-bench
cp target/release/kdsl-bench-cuda target/release/kdsl-bench-launch .carry/
suite=$(cargo test --quiet --release "${features[@]}" -p kdsl-runtime --test suite --no-run --message-format=json \
  | python3 -c 'import json,sys; print([m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable")][-1])')
cp "$suite" .carry/device-suite
differential=$(cargo test --quiet --release "${features[@]}" -p kdsl-interp --test differential --no-run --message-format=json \
  | python3 -c 'import json,sys; print([m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable")][-1])')
cp "$differential" .carry/differential
strip .carry/device-suite .carry/differential .carry/kdsl-bench-cuda .carry/kdsl-bench-launch
cp crates/kdsl-bench/reference/kernels.cu .carry/
cp scripts/gpu-run.sh .carry/
if [ -n "${KDSL_UR_SOURCE:-}" ]; then
  shim=$(find target/release/build -path '*kdsl-runtime-*/out/shim/libkdsl_sycl_shim.so' -printf '%T@ %p\n' | sort -n | tail -n 1 | cut -d' ' -f2)
  cp "$shim" .carry/libkdsl_sycl_shim.so
  bash scripts/sycl-cuda-rig-package.sh "$KDSL_UR_SOURCE" .carry/sycl-rig
fi
du -sh .carry
