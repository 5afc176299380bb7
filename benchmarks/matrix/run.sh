#!/usr/bin/env bash
# The matrix-tile differential cases and the benchmark on a CUDA machine, in one call, from the
# repository root there after scripts/gpu-package.sh and benchmarks/matrix/package.sh filled
# .carry: bash .carry/matrix/run.sh (results in $OUT, or .carry/matrix/results). PROFILE=1
# adds an ncu report of each example at 4096 (ncu-KERNEL.txt).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
carry=$(cd "$here/.." && pwd)
out=${OUT:-$here/results}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv > "$out/nvidia-smi.csv" 2>&1
python3 -c 'import torch, cupy; print("torch", torch.__version__, "cuda", torch.version.cuda, "cupy", cupy.__version__)' > "$out/versions.txt" 2>&1
cp "$here/ptxas.txt" "$out/ptxas.txt"
# The differential cases of the matrix tiles and the asynchronous copies (examples included),
# where scripts/gpu-package.sh put the binary.
if [ -x "$carry/differential" ]; then
  KDSL_WORKSPACE=$(cd "$carry/.." && pwd) KDSL_TEST_BUNDLES=$carry/bundles KDSL_TEST_DEVICE=cuda \
    timeout 180 "$carry/differential" --test-threads=1 --nocapture matrix gemm_on_matrix async_copies \
    > "$out/differential.txt" 2>&1
  echo "differential rc=$?" >> "$out/differential.txt"
  tail -n 30 "$out/differential.txt"
fi
# tf32 tiles loaded from global memory (without the differential binary, the one check of
# that path on the GPU).
timeout 30 python3 "$here/check_tf32.py" "$here/ptx/matrix_tf32.ptx" > "$out/check-tf32.txt" 2>&1
cat "$out/check-tf32.txt"
# KERNEL@FILE[+BYTES],THREADS[,BM,BN] per variant (gemm_variants.py launch).
examples=()
variants=()
while read -r name source kernel tf32 depth buffering stages threads group; do
  case $name in ''|'#'*) continue ;; esac
  argument=$kernel@$name$(python3 "$here/gemm_variants.py" launch "$tf32" "$depth" "$buffering" "$stages" "$threads")
  case $source in examples/*) examples+=("$argument") ;; *) variants+=("$argument") ;; esac
done < "$here/variants.txt"
# The matrix-group GEMMs (wgmma_variants.txt): examples among the examples, the rest variants.
while read -r name source input groups tiles columns stages; do
  case $name in ''|'#'*) continue ;; esac
  kernel=$(python3 "$here/wgmma_variants.py" kernel "$input")
  launch=$(python3 "$here/wgmma_variants.py" launch "$input" "$groups" "$tiles" "$columns" "$stages")
  case $source in
    # The sm_90 build (mma.sync per warp) beside the sm_90a one (wgmma).
    examples/*) examples+=("$kernel@$name$launch") variants+=("$kernel@${name}_sync$launch") ;;
    *) variants+=("$kernel@$name$launch") ;;
  esac
done < "$here/wgmma_variants.txt"
# The examples against cuBLAS and Triton at every size (EXAMPLE_SIZES); the variants against
# cuBLAS at the two large ones (VARIANT_SIZES).
if [ ${#examples[@]} -gt 0 ]; then
  SIZES=${EXAMPLE_SIZES:-1024,4096,8192} timeout 250 python3 "$here/bench_matrix.py" "$here/ptx" "$out/bench.json" "${examples[@]}" 2>&1 | tee "$out/bench.txt"
fi
SIZES=${VARIANT_SIZES:-4096,8192} NO_TRITON=1 timeout ${VARIANT_TIMEOUT:-180} python3 "$here/bench_matrix.py" "$here/ptx" "$out/bench-variants.json" "${variants[@]}" 2>&1 | tee "$out/bench-variants.txt"
cat "$out/versions.txt"
if [ "${PROFILE:-}" = 1 ]; then
  for argument in "${examples[@]}"; do
    kernel=${argument%%@*}
    timeout 60 ncu --kernel-name "$kernel" --launch-skip 1 --launch-count 1 \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats \
      --section WarpStateStats --section MemoryWorkloadAnalysis --section Occupancy \
      --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
      python3 "$here/profile_one.py" "$here/ptx" "$argument" > "$out/ncu-$kernel.txt" 2>&1
  done
fi
