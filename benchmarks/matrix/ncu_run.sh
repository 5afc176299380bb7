#!/usr/bin/env bash
# On the CUDA machine, after package.sh: ncu_sets.sh for each sets file of SETS (default
# ncu_sets_flat2.txt), with Triton's persistent TMA kernel beside the tutorial's
# configurations (TRITON_PERSISTENT=1), REPEAT (default 5) rounds, LIMIT seconds a file; the
# card in $OUT/gpu.txt, the logs and tables in $OUT/r.tgz (few files come back from a call).
# Usage: SETS="ncu_sets_flat2.txt ncu_sets_f32c.txt" bash .carry/matrix/ncu_run.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/gpu.txt"
mkdir -p "$OUT/r"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here"
for sets in ${SETS:-ncu_sets_flat2.txt}; do
  TRITON_PERSISTENT=1 REPEAT=${REPEAT:-5} timeout "${LIMIT:-540}" bash ncu_sets.sh "$OUT/r/ncu" "$here/$sets" 2>&1 \
    | grep -E "rc=|/ best|best Triton"
done
cd "$OUT" && tar czf r.tgz r && rm -rf r
