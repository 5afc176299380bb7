#!/usr/bin/env bash
# One call on the H200 after scripts/gpu-package.sh and benchmarks/matrix/package.sh: the
# matrix-group differential cases, then every GEMM of wgmma_variants.txt (examples and
# variants) at every size (SIZES) against cuBLAS and Triton; PROFILE=1 adds an ncu report of
# Triton and PROFILE_NAMES at 4096 (profile_pair.py); fuzzgen's matrix modules run first where
# package.sh packed them.
# Results in $OUT (or .carry/matrix/results).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
carry=$(cd "$here/.." && pwd)
out=${OUT:-$here/results}
mkdir -p "$out"
export KDSL_WORKSPACE=$(cd "$carry/.." && pwd)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv > "$out/nvidia-smi.csv" 2>&1
cp "$here/ptxas.txt" "$out/"
KDSL_TEST_BUNDLES=$carry/bundles KDSL_TEST_DEVICE=cuda timeout 60 "$carry/differential" --test-threads=1 matrix_group gemm_on_matrix_groups > "$out/differential-wgmma.txt" 2>&1
echo "rc=$?" >> "$out/differential-wgmma.txt"
grep -E "FAILED|panicked|test result|rc=" "$out"/differential-*.txt | head -30
# fuzzgen's tile and matrix-group modules on wgmma and the tensor cores (package.sh).
if [ -d "$here/fuzz-sm90a" ]; then
  KDSL_DEVICE=cuda timeout 60 "$here/fuzzgen-run" "$here/fuzz-sm90a" --report "$out/fuzz-sm90a.txt" > "$out/fuzz-sm90a.log" 2>&1
  echo "fuzz rc=$?"; tail -n 3 "$out/fuzz-sm90a.txt" 2>/dev/null
fi
# Blocks of fewer than 128 x 128 elements run at 1024^3 only (where larger blocks leave SMs
# idle), larger ones at 4096^3 and 8192^3 only; the examples at all three.
all=() small=() large=()
while read -r name source input groups tiles columns stages; do
  case $name in ''|'#'*) continue ;; esac
  kernel=$(python3 "$here/wgmma_variants.py" kernel "$input")
  spec="$kernel@$name$(python3 "$here/wgmma_variants.py" launch "$input" "$groups" "$tiles" "$columns" "$stages")"
  all+=("$spec")
  case $source in
    examples/*) small+=("$spec"); large+=("$spec") ;;
    *) if [ $((64 * groups * tiles * columns)) -lt 16384 ]; then small+=("$spec"); else large+=("$spec"); fi ;;
  esac
done < "$here/wgmma_variants.txt"
for part in small large; do
  case $part in small) sizes=1024; specs=("${small[@]}") ;; large) sizes=4096,8192; specs=("${large[@]}") ;; esac
  SIZES=${SIZES:-$sizes} timeout ${BENCH_TIMEOUT:-380} python3 "$here/bench_matrix.py" "$here/ptx" "$out/bench-$part.json" "${specs[@]}" > "$out/bench-$part.txt" 2>&1
  echo "bench $part rc=$?"
  # The runs bench.json holds, or bench.txt's lines if the timeout cut the run before the
  # JSON was written.
  if [ ! -s "$out/bench-$part.json" ]; then
    python3 -c 'import json, sys; print(json.dumps({"runs": [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]}))' "$out/bench-$part.txt" > "$out/bench-$part-partial.json"
  fi
done
# The docs' tables.
python3 "$here/summarize.py" "$out"/bench-*.json > "$out/summary.md" 2>&1
tail -n 12 "$out/summary.md"
if [ "${PROFILE:-}" = 1 ]; then
  # Triton's tutorial matmul (f16 and f32 C) and the GEMMs of PROFILE_NAMES at 4096, all in
  # one ncu run at the profiler's base clock, so their durations compare; then each kernel's
  # SASS with its stall samples.
  names=${PROFILE_NAMES:-hgemm_wgmma wg_f16a_fh_staged}
  specs=()
  for spec in "${all[@]}"; do
    for name in $names; do
      case $spec in *"@$name+"*) specs+=("$spec") ;; esac
    done
  done
  timeout 200 ncu --profile-from-start off --clock-control base \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats \
    --section WarpStateStats --section MemoryWorkloadAnalysis --section Occupancy --section SourceCounters \
    --metrics "gpu__time_duration.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
    -o "$out/pair" python3 "$here/profile_pair.py" "$here/ptx" 4096 "${specs[@]}" > "$out/ncu-pair.log" 2>&1
  echo "ncu rc=$?"
  ncu --import "$out/pair.ncu-rep" > "$out/ncu-pair.txt" 2>&1
  ncu --import "$out/pair.ncu-rep" --page source --print-source sass --csv > "$out/ncu-pair-sass.csv" 2>&1
  grep -E "^  [a-z_]+.*\(|Duration|SM Frequency" "$out/ncu-pair.txt" | head -40
fi
