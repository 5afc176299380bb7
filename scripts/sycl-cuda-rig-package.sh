#!/usr/bin/env bash
# Packs what a CUDA machine without network needs to get a SYCL CUDA device for the SYCL runtime
# kdsl installs (docs/sycl-cuda.md), into DEST (default .carry/sycl-rig):
#   sycl-prefix.tar.xz   libsycl, the UR loader, UMF, hwloc and the loader's Intel math
#                        libraries from $KDSL_PREFIX/lib, UMF's CMake package and headers;
#   unified-runtime.tar.xz  the unified-runtime source tree UR_SOURCE (without its tests);
#   sycl-cuda-adapter.sh the script that builds the adapter there (scripts/sycl-cuda-adapter.sh);
#   sycl-cuda-rig-env.sh what the GPU runners source to unpack, build and use it.
# Neither the sources nor anything built from them is part of this repository.
#   bash scripts/sycl-cuda-rig-package.sh UR_SOURCE [DEST]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source scripts/env.sh
if [ $# -lt 1 ] || [ ! -f "$1/CMakeLists.txt" ]; then
  echo "usage: $0 UR_SOURCE [DEST]  (UR_SOURCE: a unified-runtime source tree)" >&2
  exit 2
fi
source_dir=$(cd "$1" && pwd)
dest=${2:-$root/.carry/sycl-rig}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
# The prefix archive takes minutes to compress: kept in target/ and made again only when the
# SYCL runtime's version changes.
version=$("$KDSL_PREFIX/bin/python" -m pip show intel-sycl-rt 2>/dev/null | sed -n 's/^Version: //p')
cache=$root/target/sycl-rig-cache/sycl-prefix-${version:-unknown}.tar.xz
if [ ! -f "$cache" ]; then
  echo "sycl-cuda-rig-package: packing the SYCL runtime $version (a few minutes)"
  mkdir -p "$(dirname "$cache")"
  (cd "$KDSL_PREFIX" && tar -cf - --exclude='*-gdb.py' lib/libsycl.so* lib/libur_loader.so* lib/libumf.so* lib/libhwloc.so* \
      lib/libsvml.so lib/libimf.so lib/libirng.so lib/libintlc.so* lib/cmake/umf include/umf include/umf.h \
      | xz -T0 -6 > "$cache.partial")
  mv "$cache.partial" "$cache"
fi
cp "$cache" "$dest/sycl-prefix.tar.xz"
(cd "$source_dir" && tar -cf - --exclude=./test --exclude=./.git --exclude='./build*' . | xz -T0 -6 > "$dest/unified-runtime.tar.xz")
cp scripts/sycl-cuda-adapter.sh scripts/sycl-cuda-rig-env.sh "$dest/"
du -sh "$dest"/*
