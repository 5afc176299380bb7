#!/usr/bin/env bash
# Prepares the matrix-tile benchmark for one call on a CUDA machine: the GEMM variants of
# variants.txt written by gemm_variants.py and compiled to PTX for sm_90, with their ptxas
# registers, into .carry/matrix/ (beside what scripts/gpu-package.sh put in .carry: the
# differential tests and the example bundles). There, .carry/matrix/run.sh runs everything.
# Usage: bash scripts/gpu-package.sh && bash benchmarks/matrix/package.sh
# MATRIX_OUT=FOLDER writes there instead (run.sh then skips the differential cases when no
# `differential` binary lies beside it); MATRIX_VARIANTS=FILE takes another variants list.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
source scripts/env.sh
out=${MATRIX_OUT:-.carry/matrix}
variants=${MATRIX_VARIANTS:-$here/variants.txt}
if [ -z "${MATRIX_OUT:-}" ]; then
  [ -x .carry/differential ] || { echo "run scripts/gpu-package.sh first" >&2; exit 1; }
fi
cargo build --quiet -p kdsl-cli
rm -rf "$out" && mkdir -p "$out/krn" "$out/ptx"
# Every script and sets file, so a new one cannot be left behind (a stale carry cost a call).
cp "$here"/*.py "$here"/*.sh "$here"/ncu_sets*.txt "$out/"
cp "$variants" "$out/variants.txt"
ptxas=$(command -v ptxas || find "$KDSL_PREFIX/" -name ptxas -type f | head -n 1)
: > "$out/ptxas.txt"
grep -v '^#' "$variants" | while read -r name file kernel tf32 depth buffering stages threads group; do
  [ -n "$name" ] || continue
  case $file in
    examples/*) cp "$file" "$out/krn/$name.krn" ;;
    *) python3 "$here/gemm_variants.py" "$kernel" "$tf32" "$depth" "$buffering" "$out/krn/$name.krn" "$stages" "$threads" "$group" ;;
  esac
  target/debug/kdsl compile "$out/krn/$name.krn" --target ptx --arch sm_90 --emit ptx -o "$out/ptx/$name.ptx"
  echo "$name: $("$ptxas" -arch=sm_90 -v "$out/ptx/$name.ptx" -o /dev/null 2>&1 | grep -E 'Used|spill|C751' | tr -s ' \n' ' ')" >> "$out/ptxas.txt"
done
# The GEMMs on matrix-group tiles (wgmma, sm_90a): wgmma_variants.txt, the examples included.
cp "$here/wgmma_variants.txt" "$out/"
grep -v '^#' "$here/wgmma_variants.txt" | while read -r name file input groups tiles columns stages; do
  [ -n "$name" ] || continue
  case $file in
    examples/*) cp "$file" "$out/krn/$name.krn" ;;
    *) python3 "$here/wgmma_variants.py" "$input" "$groups" "$tiles" "$columns" "$stages" "$out/krn/$name.krn" ;;
  esac
  target/debug/kdsl compile "$out/krn/$name.krn" --target ptx --arch sm_90a --emit ptx -o "$out/ptx/$name.ptx"
  echo "$name: $("$ptxas" -arch=sm_90a -v "$out/ptx/$name.ptx" -o /dev/null 2>&1 | grep -E 'Used|spill|C751' | tr -s ' \n' ' ')" >> "$out/ptxas.txt"
  # The examples also for sm_90, where matrix groups take mma.sync per warp.
  case $file in
    examples/*)
      target/debug/kdsl compile "$out/krn/$name.krn" --target ptx --arch sm_90 --emit ptx -o "$out/ptx/${name}_sync.ptx"
      echo "${name}_sync: $("$ptxas" -arch=sm_90 -v "$out/ptx/${name}_sync.ptx" -o /dev/null 2>&1 | grep -E 'Used|spill|C751' | tr -s ' \n' ' ')" >> "$out/ptxas.txt" ;;
  esac
done
# fuzzgen's tile and matrix-group modules (docs/fuzzgen.md) for sm_90a, with the interpreter's
# outputs, and the runner (no LLVM): 10 tile seeds and 20 matrix-group seeds, about 19 MiB.
# MATRIX_FUZZ=0 leaves them out.
if [ "${MATRIX_FUZZ:-1}" != 0 ]; then
  cargo build --quiet -p kdsl-fuzzgen --bin fuzzgen-pack --bin fuzzgen-replay
  sources=$(mktemp -d)
  for seed in $(seq 6 10 96) $(seq 2 20 182) $(seq 18 20 198); do
    target/debug/fuzzgen-replay "$seed" --print-source > "$sources/$seed.krn"
  done
  target/debug/fuzzgen-pack "$out/fuzz-sm90a" --arch sm_90a --source-dir "$sources" | tail -n 1
  rm -rf "$sources"
  cargo build --quiet -p kdsl-fuzzgen --no-default-features --bin fuzzgen-run
  cp target/debug/fuzzgen-run "$out/" && strip "$out/fuzzgen-run"
fi
# Matrix groups through mma.sync (sm_90 without its `a`): the differential binary (release, no
# SYCL, no LLVM) and bundles of the matrix-group kernels without an sm_90a image, so an H100 or
# H200 runs the sm_90 one (device_call.sh's mmasync step). MATRIX_MMA_SYNC=0 leaves them out.
if [ "${MATRIX_MMA_SYNC:-1}" != 0 ]; then
  differential=$(cargo test --quiet --release --no-default-features -p kdsl-interp --test differential \
    --no-run --message-format=json \
    | python3 -c 'import json,sys; print([m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable")][-1])')
  mkdir -p "$out/mma-sync/bundles/tests"
  cp "$differential" "$out/mma-sync/differential" && strip "$out/mma-sync/differential"
  for source in examples/*wgmma*.krn tests/kernels/*group*.krn; do
    case $source in examples/*) folder=$out/mma-sync/bundles ;; *) folder=$out/mma-sync/bundles/tests ;; esac
    target/debug/kdsl compile "$source" --target ptx --arch sm_90 -o "$folder/$(basename "$source" .krn).kbundle"
  done
fi
# tf32 tiles straight from global memory, for check_tf32.py.
target/debug/kdsl compile tests/kernels/matrix_tf32.krn --target ptx --arch sm_90 --emit ptx -o "$out/ptx/matrix_tf32.ptx"
cat "$out/ptxas.txt"
du -sh "$out"
