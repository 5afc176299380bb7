#!/usr/bin/env bash
# Runs on the CUDA machine (copied to target/python-carry/run.sh by scripts/python-gpu-package.sh),
# from a copy of the repository: installs the carried kdsl wheel and pytest into a private folder
# (`pip install --no-deps --no-index --target`, no LLVM, no network), then runs the Python tests
# (CuPy and PyTorch arrays, a non-default stream), the k-means example on NumPy, CuPy and
# PyTorch arrays against PyTorch (kmeans_assign_tiles too), the k-means assignment on matrix
# units against the SIMT kernel and PyTorch (kmeans_tiles.py), the launch-overhead benchmark
# against CuPy RawKernel, the collective kernels against Triton and PyTorch, and the vector
# kernels (f32x4) against Triton and PyTorch.
# Results go to $OUT (or target/python-carry/results).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${OUT:-$here/results}
python=${PYTHON:-python3}
mkdir -p "$out"
site=$here/site
rm -rf "$site" && mkdir -p "$site"
for wheel in "$here"/wheels/*.whl; do
  if ! "$python" -m pip install -q --disable-pip-version-check --no-deps --no-index --target "$site" "$wheel" 2>/dev/null; then
    # No pip: a wheel is a zip archive of what site-packages holds.
    "$python" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$wheel" "$site"
  fi
done
export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
# The SYCL CUDA rig (docs/sycl-cuda.md): build the adapter into a copy of the SYCL runtime that
# dpctl and kdsl's SYCL shim then load; the run fails if it was carried and no device appears.
rig_status=0
if [ -d "$here/sycl-rig" ]; then
  source "$here/sycl-rig/sycl-cuda-rig-env.sh" "$out/sycl-cuda-adapter.txt" || echo "the SYCL CUDA adapter did not build" >&2
  "$python" -c 'import dpctl, kdsl, sys; ok = bool(dpctl.get_devices(backend="cuda")) and any(d.platform_backend == "cuda" for d in kdsl.devices()); print("SYCL CUDA device:", ok); sys.exit(0 if ok else 1)' 2>&1 | tee "$out/sycl-cuda-device.txt"
  rig_status=${PIPESTATUS[0]}
fi
export KDSL_CACHE_DIR=$here/cache
cd "$root"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  "$python" --version
  "$python" -c 'import cupy, torch; print("cupy", cupy.__version__, "torch", torch.__version__)'
  "$python" -c 'import kdsl; print(kdsl.COMPILER_VERSION); [print(" ", d) for d in kdsl.devices()]; [print("  note:", n) for n in kdsl.device_notes()]'
  "$python" -c 'import kdsl._compiler' 2>&1 | tail -n 1 | sed 's/^/compiler module: /'
} 2>&1 | tee "$out/environment.txt"
"$python" -m pytest -v -p no:cacheprovider python/tests 2>&1 | tee "$out/pytest.txt"
pytest_status=${PIPESTATUS[0]}
"$python" crates/kdsl-bench/python/launch_overhead.py --launches 5000 --repeats 7 --json "$out/launch_overhead.json" 2>&1 | tee "$out/launch_overhead.txt"
overhead_status=${PIPESTATUS[0]}
# The first launch in new processes, with the driver's PTX JIT cache off and on.
"$python" crates/kdsl-bench/python/first_launch.py --rounds 5 --json "$out/first_launch.json" 2>&1 | tee "$out/first_launch.txt"
first_launch_status=${PIPESTATUS[0]}
kmeans_status=0 collectives_status=0 vectors_status=0 examples_status=0
# KDSL_SKIP_BENCHMARKS=1 leaves out the long comparisons with Triton and PyTorch.
if [ -z "${KDSL_SKIP_BENCHMARKS:-}" ]; then
  "$python" examples/python/kmeans.py --backend numpy,cupy,torch --samples 1000000 --features 32 --clusters 128 --iterations 20 --tiles 2>&1 | tee "$out/kmeans.txt"
  kmeans_status=${PIPESTATUS[0]}
  "$python" crates/kdsl-bench/python/kmeans_tiles.py --json "$out/kmeans_tiles.json" 2>&1 | tee "$out/kmeans_tiles.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || kmeans_status=1
  { "$python" examples/python/pairwise_distance.py --backend numpy,cupy,torch --points 8192 --dimensions 32 \
      && "$python" examples/python/matmul.py --backend numpy,cupy,torch --size 4096; } 2>&1 | tee "$out/examples.txt"
  examples_status=${PIPESTATUS[0]}
  "$python" crates/kdsl-bench/python/collectives_vs_triton.py --json "$out/collectives_vs_triton.json" 2>&1 | tee "$out/collectives_vs_triton.txt"
  collectives_status=${PIPESTATUS[0]}
  "$python" crates/kdsl-bench/python/vectors_vs_triton.py --json "$out/vectors_vs_triton.json" 2>&1 | tee "$out/vectors_vs_triton.txt"
  vectors_status=${PIPESTATUS[0]}
fi
echo "pytest exit $pytest_status, kmeans exit $kmeans_status, examples exit $examples_status, first launch exit $first_launch_status, launch overhead exit $overhead_status, collectives exit $collectives_status, vectors exit $vectors_status, SYCL CUDA rig $rig_status" | tee "$out/status.txt"
[ "$rig_status" -eq 0 ] && [ "$pytest_status" -eq 0 ] && [ "$kmeans_status" -eq 0 ] && [ "$examples_status" -eq 0 ] && [ "$first_launch_status" -eq 0 ] && [ "$overhead_status" -eq 0 ] && [ "$collectives_status" -eq 0 ] && [ "$vectors_status" -eq 0 ]
