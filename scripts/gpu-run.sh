#!/usr/bin/env bash
# Runs on the CUDA machine, from the folder scripts/gpu-package.sh filled: the device suite and
# the differential tests on the CUDA device, then the benchmark against nvcc. Results go to $OUT (or ./results).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${OUT:-$here/results}
mkdir -p "$out"
# GPU runs are the long runs (docs/environment.md): tests size their random runs up.
export KDSL_LONG_TESTS=${KDSL_LONG_TESTS:-1}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
nvcc --version | tail -n 2 | tee -a "$out/gpu.txt"
# The SYCL CUDA rig (present when gpu-package.sh had KDSL_UR_SOURCE): the adapter is built here
# into a copy of the SYCL runtime, and the suites run on the SYCL CUDA device as well.
sycl_cuda=0
sycl_status=0
if [ -d "$here/sycl-rig" ]; then
  if source "$here/sycl-rig/sycl-cuda-rig-env.sh" "$out/sycl-cuda-adapter.txt"; then
    export KDSL_SYCL_SHIM=$here/libkdsl_sycl_shim.so
    sycl_cuda=1
  else
    echo "the SYCL CUDA adapter did not build" | tee -a "$out/gpu.txt"
    sycl_status=1
  fi
fi
KDSL_TEST_BUNDLES=$here/bundles KDSL_TEST_DEVICE=cuda "$here/device-suite" --test-threads 1 2>&1 | tee "$out/suite.txt"
suite_status=${PIPESTATUS[0]}
# The differential tests read the .krn sources: KDSL_WORKSPACE is the repository root here.
KDSL_WORKSPACE=$(cd "$here/.." && pwd) KDSL_TEST_BUNDLES=$here/bundles KDSL_TEST_DEVICE=cuda "$here/differential" --test-threads 1 2>&1 | tee "$out/differential.txt"
differential_status=${PIPESTATUS[0]}
# Matrix groups through mma.sync: the same differential tests on bundles without sm_90a.
KDSL_WORKSPACE=$(cd "$here/.." && pwd) KDSL_TEST_BUNDLES=$here/bundles-sm90 KDSL_TEST_DEVICE=cuda "$here/differential" --test-threads 1 matrix_group gemm_on_matrix_groups 2>&1 | tee "$out/differential-mma-sync.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || differential_status=1
nvcc -O3 -arch=sm_90 -ptx "$here/kernels.cu" -o "$out/kernels_nvcc.ptx"
"$here/kdsl-bench-cuda" "$here/bundles" "$out/kernels_nvcc.ptx" --device cuda --runs 30 --json "$out/bench.json" 2>&1 | tee "$out/bench.txt"
bench_status=${PIPESTATUS[0]}
"$here/kdsl-bench-launch" "$here/bundles" --json "$out/launch.json" 2>&1 | tee "$out/launch.txt"
launch_status=${PIPESTATUS[0]}
if [ "$sycl_cuda" -eq 1 ]; then
  # The rig was asked for: the suites must find a SYCL CUDA device, or the run fails.
  KDSL_TEST_BUNDLES=$here/bundles KDSL_TEST_DEVICE=sycl_cuda "$here/device-suite" --test-threads 1 2>&1 | tee "$out/suite-sycl-cuda.txt"
  suite_sycl=${PIPESTATUS[0]}
  KDSL_WORKSPACE=$(cd "$here/.." && pwd) KDSL_TEST_BUNDLES=$here/bundles KDSL_TEST_DEVICE=sycl_cuda "$here/differential" --test-threads 1 2>&1 | tee "$out/differential-sycl-cuda.txt"
  differential_sycl=${PIPESTATUS[0]}
  "$here/kdsl-bench-cuda" "$here/bundles" "$out/kernels_nvcc.ptx" --device sycl_cuda:gpu --versus cuda:0 --runs 30 --json "$out/bench-sycl-vs-cuda.json" 2>&1 | tee "$out/bench-sycl-vs-cuda.txt"
  bench_sycl=${PIPESTATUS[0]}
  echo "SYCL CUDA: suite exit $suite_sycl, differential exit $differential_sycl, bench exit $bench_sycl"
  [ "$suite_sycl" -eq 0 ] && [ "$differential_sycl" -eq 0 ] && [ "$bench_sycl" -eq 0 ] || sycl_status=1
fi
echo "suite exit $suite_status, differential exit $differential_status, bench exit $bench_status, launch exit $launch_status, SYCL CUDA status $sycl_status"
[ "$suite_status" -eq 0 ] && [ "$differential_status" -eq 0 ] && [ "$bench_status" -eq 0 ] && [ "$launch_status" -eq 0 ] && [ "$sycl_status" -eq 0 ]
