#!/usr/bin/env bash
# Builds the Unified Runtime CUDA adapter (libur_adapter_cuda.so) from a unified-runtime source
# tree and installs it next to the libsycl of a SYCL prefix, which turns every NVIDIA GPU into a
# SYCL CUDA device for that libsycl and for dpctl/dpnp built on it. This is how a user without
# Codeplay's "oneAPI for NVIDIA GPUs" plugin gets one (docs/sycl-cuda.md).
#
#   bash scripts/sycl-cuda-adapter.sh UR_SOURCE [SYCL_PREFIX] [BUILD_DIR]
#
# UR_SOURCE: a checkout of the public repository oneapi-src/unified-runtime at the commit that
#   matches the prefix's libsycl (eb58ab8 for the 2026.2 wheels, loader 0.12).
# SYCL_PREFIX: the environment holding libsycl (lib/), UMF's CMake package (lib/cmake/umf) and
#   headers (include/umf*): the pip prefix of intel-sycl-rt; default $KDSL_PREFIX or .kdsl/prefix.
# Needs CMake, a C++17 compiler and the CUDA toolkit (CUDA 12 or 13). Idempotent: an adapter
# already installed and newer than the source tree is kept.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ $# -lt 1 ] || [ ! -f "$1/CMakeLists.txt" ]; then
  echo "usage: $0 UR_SOURCE [SYCL_PREFIX] [BUILD_DIR]  (UR_SOURCE: a unified-runtime source tree)" >&2
  exit 2
fi
source_dir=$(cd "$1" && pwd)
prefix=$(cd "${2:-${KDSL_PREFIX:-$root/.kdsl/prefix}}" && pwd)
build_dir=${3:-$source_dir/build-cuda}
libdir=$prefix/lib
if ! ls "$libdir"/libsycl.so* >/dev/null 2>&1; then
  echo "sycl-cuda-adapter: no libsycl.so in $libdir (install intel-sycl-rt there first)" >&2
  exit 1
fi
if [ ! -d "$libdir/cmake/umf" ]; then
  echo "sycl-cuda-adapter: UMF's CMake package is missing ($libdir/cmake/umf)" >&2
  exit 1
fi
installed=$libdir/libur_adapter_cuda.so.0
if [ -f "$installed" ] && [ -z "$(find "$source_dir" -newer "$installed" -name '*.cpp' -print -quit)" ]; then
  echo "sycl-cuda-adapter: $installed is up to date"
  exit 0
fi
command -v cmake >/dev/null || { echo "sycl-cuda-adapter: cmake is missing" >&2; exit 1; }
command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] \
  || { echo "sycl-cuda-adapter: the CUDA toolkit (nvcc) is missing" >&2; exit 1; }
echo "sycl-cuda-adapter: building the CUDA adapter from $source_dir against $prefix"
cmake -S "$source_dir" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release \
  -DUR_BUILD_ADAPTER_CUDA=ON -DUR_BUILD_TESTS=OFF -DUR_BUILD_EXAMPLES=OFF -DUR_BUILD_TOOLS=OFF \
  -DUR_ENABLE_TRACING=OFF -DUR_ENABLE_SANITIZER=OFF -Dumf_DIR="$libdir/cmake/umf" >"$build_dir.log" 2>&1 \
  || { tail -n 30 "$build_dir.log" >&2; exit 1; }
cmake --build "$build_dir" -j"$(nproc)" --target ur_adapter_cuda >>"$build_dir.log" 2>&1 \
  || { tail -n 30 "$build_dir.log" >&2; exit 1; }
cp -P "$build_dir"/lib/libur_adapter_cuda.so* "$libdir/"
echo "sycl-cuda-adapter: installed $(ls "$libdir"/libur_adapter_cuda.so* | tr '\n' ' ')"
