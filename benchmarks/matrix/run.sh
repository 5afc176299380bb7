#!/usr/bin/env bash
# The matrix-tile differential cases and the benchmark on the H200, in one call.
cd "$(dirname "$0")"
export KDSL_WORKSPACE=$PWD KDSL_TEST_BUNDLES=$PWD/bundles KDSL_TEST_DEVICE=cuda
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv > "$OUT/nvidia-smi.csv" 2>&1
python3 -c 'import torch, cupy; print("torch", torch.__version__, "cuda", torch.version.cuda, "cupy", cupy.__version__)' > "$OUT/versions.txt" 2>&1
timeout 200 ./differential --test-threads=1 --nocapture matrix gemm_on_matrix_units > "$OUT/differential.txt" 2>&1; echo "differential rc=$?" >> "$OUT/differential.txt"
tail -n 25 "$OUT/differential.txt"
timeout 300 python3 bench_matrix.py ptx "$OUT/bench.json" 2>&1 | tee "$OUT/bench.txt"
for f in ptx/*.ptx; do ptxas -arch=sm_90 -v "$f" -o /tmp/x.cubin 2>&1 | grep -E "Used|stack" ; done > "$OUT/ptxas.txt" 2>&1
cat "$OUT/versions.txt"
