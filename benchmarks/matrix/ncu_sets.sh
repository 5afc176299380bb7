#!/usr/bin/env bash
# On the CUDA machine, in .carry/matrix (package.sh): profile_pair.py under ncu at the base
# clock (durations only) for sets of GEMMs, REPEAT (default 3) alternations each, so kdsl and
# Triton compare without clock drift. Usage: bash ncu_sets.sh OUT NAME=SPECS_FILE:SIZE[,SIZE]...
# (SPECS_FILE: bench_matrix.py's KERNEL@FILE+... specs, one line). ncu_table.py reads OUT.
set -uo pipefail
out=$1; shift; mkdir -p "$out"
for set in "$@"; do
  name=${set%%=*}; rest=${set#*=}; file=${rest%%:*}; sizes=${rest#*:}
  for size in ${sizes//,/ }; do
    # shellcheck disable=SC2046
    REPEAT=${REPEAT:-3} timeout 200 ncu --profile-from-start off --clock-control base --metrics gpu__time_duration.sum \
      python3 profile_pair.py ptx "$size" $(cat "$file") > "$out/ncu-$name-$size.txt" 2>&1
    echo "$name $size rc=$? $(grep -c gpu__time "$out/ncu-$name-$size.txt")"
  done
done
