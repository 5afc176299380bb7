#!/usr/bin/env bash
# Compiles every examples/*.krn into one bundle per file (SPIR-V, PTX for sm_75 and sm_90 and,
# for matrix-group kernels, sm_90a, AMDGPU for gfx90a, gfx1100 and gfx9-generic) in the folder given as the first argument, and
# the feature kernels of tests/kernels/*.krn into its tests/ subfolder (for the differential tests).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/target/kdsl-bundles}
profile=${KDSL_PROFILE:-dev}
mkdir -p "$out/tests"
cd "$root"
cargo build --quiet --profile "$profile" -p kdsl-cli
binary_dir=target/debug
[ "$profile" = dev ] || binary_dir=target/$profile
for source in examples/*.krn; do
  name=$(basename "$source" .krn)
  arches=sm_75,sm_90,gfx90a,gfx1100,gfx9-generic
  # tf32 matrix tiles need sm_80 or later.
  case $name in *tf32*) arches=sm_90,gfx90a,gfx1100,gfx9-generic ;; esac
  # Matrix-group tiles reach wgmma on sm_90a alone (the runtime prefers it on 9.0 devices).
  case $name in *wgmma*|*group*) arches=$arches,sm_90a ;; esac
  "$binary_dir/kdsl" compile "$source" --target spirv,ptx,amdgpu --arch "$arches" -o "$out/$name.kbundle"
done
# Three examples also as SYCLBIN files, which the device suite loads through the SYCLBIN path.
for name in saxpy reduction reduction_sized; do
  "$binary_dir/kdsl" compile "examples/$name.krn" --format syclbin --target spirv,ptx --arch sm_75 -o "$out/$name.syclbin"
done
for source in tests/kernels/*.krn; do
  name=$(basename "$source" .krn)
  arches=sm_75,sm_90
  # tf32 and bf16 tiles need sm_80 or later.
  case $name in *tf32*|matrix_bf16) arches=sm_90 ;; esac
  # Matrix-group tiles reach wgmma, tile copies the tensor memory accelerator, on sm_90a alone.
  case $name in *wgmma*|*group*|tile_copies) arches=$arches,sm_90a ;; esac
  "$binary_dir/kdsl" compile "$source" --target spirv,ptx --arch "$arches" -o "$out/tests/$name.kbundle"
done
# The launch-sized local arrays as a SYCLBIN too, for the differential tests' SYCLBIN case.
"$binary_dir/kdsl" compile tests/kernels/local_parameters.krn --format syclbin --target spirv,ptx --arch sm_75 -o "$out/tests/local_parameters.syclbin"
# The kernel indexing past 2^32 elements, for the device suite's wide-buffer case.
"$binary_dir/kdsl" compile tests/kernels/wide_indices.krn --target spirv,ptx,amdgpu --arch sm_75,sm_90,gfx90a -o "$out/wide_indices.kbundle"
# The vector kernels, for the device suite's vector case.
"$binary_dir/kdsl" compile tests/kernels/vectors.krn --target spirv,ptx,amdgpu --arch sm_75,sm_90,gfx90a -o "$out/vectors.kbundle"
# The printing kernel, for the device suite's print cases.
"$binary_dir/kdsl" compile tests/kernels/print.krn --target spirv,ptx,amdgpu --arch sm_75,sm_90,gfx90a -o "$out/print.kbundle"
# The checked-mode kernels, compiled with --checked, for the device suite's fault cases.
"$binary_dir/kdsl" compile tests/kernels/checked.krn --checked --target spirv,ptx,amdgpu --arch sm_75,sm_90,gfx90a,gfx1100,gfx9-generic -o "$out/checked.kbundle"
echo "compiled $(ls "$root"/examples/*.krn | wc -l) examples and $(ls "$root"/tests/kernels/*.krn | wc -l) test kernels into $out"
