#!/usr/bin/env bash
# The matrix-tile differential cases and the benchmark on a CUDA machine, in one call, from the
# repository root there after scripts/gpu-package.sh and benchmarks/matrix/package.sh filled
# .carry: bash .carry/matrix/run.sh (results in $OUT, or .carry/matrix/results).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
carry=$(cd "$here/.." && pwd)
out=${OUT:-$here/results}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv > "$out/nvidia-smi.csv" 2>&1
python3 -c 'import torch, cupy; print("torch", torch.__version__, "cuda", torch.version.cuda, "cupy", cupy.__version__)' > "$out/versions.txt" 2>&1
cp "$here/ptxas.txt" "$out/ptxas.txt"
# The differential cases of the matrix tiles and the asynchronous copies (examples included).
KDSL_WORKSPACE=$(cd "$carry/.." && pwd) KDSL_TEST_BUNDLES=$carry/bundles KDSL_TEST_DEVICE=cuda \
  timeout 120 "$carry/differential" --test-threads=1 --nocapture matrix gemm_on_matrix_units async_copies \
  > "$out/differential.txt" 2>&1
echo "differential rc=$?" >> "$out/differential.txt"
tail -n 30 "$out/differential.txt"
# KERNEL@FILE[+BYTES],THREADS per variant; BYTES: the ring in dynamic shared memory (buffering 5).
examples=()
variants=()
while read -r name source kernel tf32 depth buffering stages threads group; do
  case $name in ''|'#'*) continue ;; esac
  argument=$kernel@$name
  if [ "$buffering" = 5 ]; then
    argument=$argument+$(python3 "$here/gemm_variants.py" ring-bytes "$kernel" "$tf32" "$depth" "$stages")
  fi
  argument=$argument,$threads
  case $source in examples/*) examples+=("$argument") ;; *) variants+=("$argument") ;; esac
done < "$here/variants.txt"
# The examples against cuBLAS and Triton at every size; the variants against cuBLAS at the two
# large ones.
timeout 250 python3 "$here/bench_matrix.py" "$here/ptx" "$out/bench.json" "${examples[@]}" 2>&1 | tee "$out/bench.txt"
SIZES=4096,8192 NO_TRITON=1 timeout 180 python3 "$here/bench_matrix.py" "$here/ptx" "$out/bench-variants.json" "${variants[@]}" 2>&1 | tee "$out/bench-variants.txt"
cat "$out/versions.txt"
