#!/usr/bin/env bash
# Runs on the CUDA machine, from the folder scripts/gpu-package.sh filled: the device suite and
# the differential tests on the CUDA device, then the benchmark against nvcc. Results go to $OUT (or ./results).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${OUT:-$here/results}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
nvcc --version | tail -n 2 | tee -a "$out/gpu.txt"
KDSL_TEST_BUNDLES=$here/bundles KDSL_TEST_DEVICE=cuda "$here/device-suite" --test-threads 1 2>&1 | tee "$out/suite.txt"
suite_status=${PIPESTATUS[0]}
# The differential tests read the .krn sources: KDSL_WORKSPACE is the repository root here.
KDSL_WORKSPACE=$(cd "$here/.." && pwd) KDSL_TEST_BUNDLES=$here/bundles KDSL_TEST_DEVICE=cuda "$here/differential" --test-threads 1 2>&1 | tee "$out/differential.txt"
differential_status=${PIPESTATUS[0]}
nvcc -O3 -arch=sm_90 -ptx "$here/kernels.cu" -o "$out/kernels_nvcc.ptx"
"$here/kdsl-bench-cuda" "$here/bundles" "$out/kernels_nvcc.ptx" --device cuda --runs 30 --json "$out/bench.json" 2>&1 | tee "$out/bench.txt"
bench_status=${PIPESTATUS[0]}
"$here/kdsl-bench-launch" "$here/bundles" --json "$out/launch.json" 2>&1 | tee "$out/launch.txt"
launch_status=${PIPESTATUS[0]}
echo "suite exit $suite_status, differential exit $differential_status, bench exit $bench_status, launch exit $launch_status"
[ "$suite_status" -eq 0 ] && [ "$differential_status" -eq 0 ] && [ "$bench_status" -eq 0 ] && [ "$launch_status" -eq 0 ]
