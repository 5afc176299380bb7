#!/usr/bin/env bash
# One device call for issue 25, ordered by what the card has not measured yet, since a call
# that runs past its limit keeps only what it finished: on an H200 (the issue's card) the
# flattened TMA forms (the example among them), TF32 at 8192³, then f32 C by tile stores and
# the Python tile tests; on an H100 (flat forms measured in session 29) the example beside its
# generated kernel, the Python tests and f32 C first. From the repository
# root after package.sh, carrying .carry/matrix and target/python-carry (python_tiles.sh).
# Results: $OUT/gpu.txt, $OUT/pytest.txt and $OUT/STEP.tgz for each ncu step.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "card: $card"
case $card in
  *H200*) order="flat2 tf32 f32c python" ;;
  *) order="example python f32c flat2" ;;
esac
# Matrix groups through mma.sync per warp first (seconds; never run on a GPU before).
for step in mmasync $order; do
  case $step in
    mmasync)
      [ -x "$here/mma-sync/differential" ] || continue
      KDSL_WORKSPACE=$(cd "$here/../.." && pwd) KDSL_TEST_BUNDLES=$here/mma-sync/bundles KDSL_TEST_DEVICE=cuda \
        timeout 120 "$here/mma-sync/differential" --test-threads 1 matrix_group gemm_on_matrix_groups \
        > "$OUT/mma-sync.txt" 2>&1
      echo "mma-sync rc=$?" | tee -a "$OUT/mma-sync.txt"
      grep -E "^test |test result" "$OUT/mma-sync.txt" | tail -n 30
      ;;
    python) PYLIMIT=${PYLIMIT:-100} bash "$here/python_tiles.sh" ;;
    *)
      SETS=ncu_sets_$step.txt REPEAT=${REPEAT:-3} LIMIT=${LIMIT:-160} bash "$here/ncu_run.sh"
      mv "$OUT/r.tgz" "$OUT/$step.tgz"
      ;;
  esac
done
