#!/usr/bin/env bash
# On the CUDA machine, after package.sh: each set of ncu_sets.txt (or the file given) timed
# with profile_pair.py under ncu at the profiler's base clock (durations only), REPEAT
# (default 3) rounds of Triton's tutorial matmul in every configuration of its list
# (TRITON_CONFIGS=all) and the set's GEMMs in one process, so kdsl and Triton's best compare
# without the boost clock's drift; then the medians and ratios (ncu_table.py).
# Usage: bash .carry/matrix/ncu_sets.sh OUT [SETS_FILE]
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$1
sets=${2:-$here/ncu_sets.txt}
mkdir -p "$out"
cd "$here"
while read -r name sizes gemms; do
  case $name in ''|'#'*) continue ;; esac
  specs=()
  for gemm in $gemms; do
    read -r _ file input groups tiles columns stages < <(grep -E "^$gemm " wgmma_variants.txt)
    kernel=$(python3 wgmma_variants.py kernel "$input")
    # An example's kernel is named after its file.
    case $file in examples/*) kernel=$(basename "$file" .krn)${kernel#"${kernel%\$contiguous}"} ;; esac
    specs+=("$kernel@$gemm$(python3 wgmma_variants.py launch "$input" "$groups" "$tiles" "$columns" "$stages")")
  done
  for size in ${sizes//,/ }; do
    log=$out/ncu-$name-$size.txt
    TRITON_CONFIGS=all REPEAT=${REPEAT:-3} timeout 300 ncu --profile-from-start off --clock-control base --print-units base \
      --metrics gpu__time_duration.sum python3 profile_pair.py ptx "$size" "${specs[@]}" > "$log" 2>&1
    echo "$name $size rc=$?"
    python3 ncu_table.py "$log" | tee "$out/table-$name-$size.txt"
  done
done < "$sets"
