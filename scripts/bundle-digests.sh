#!/usr/bin/env bash
# Prints a sha256 per output for every .krn under examples/ and tests/kernels/ (the test kit's
# KERNEL_FOLDERS): the bundle for the default targets, the checked-mode bundle, and the kdsl IR
# text. Run it before and after a refactoring that must not change what the compiler emits and
# diff the two outputs. A file that does not compile gets a digest of its diagnostics instead.
# Usage: bash scripts/bundle-digests.sh [OUTPUT_FOLDER] > digests.txt (DIGESTS_BINARY=path/to/kdsl uses
# that binary instead of building kdsl-cli; DIGESTS_FLAGS adds `kdsl compile` flags to every
# compilation, e.g. DIGESTS_FLAGS='-O0 --target ptx,amdgpu --arch sm_75,sm_90,gfx90a,gfx1100'
# to hold the GPU images to the same bytes through a change that is meant to alter SPIR-V only).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/target/bundle-digests}
profile=${KDSL_PROFILE:-dev}
cd "$root"
if [ -n "${DIGESTS_BINARY:-}" ]; then
  binary=$DIGESTS_BINARY
else
  cargo build --quiet --profile "$profile" -p kdsl-cli
  binary=target/debug/kdsl
  [ "$profile" = dev ] || binary=target/$profile/kdsl
fi
rm -rf "$out"
mkdir -p "$out"
digest() { sha256sum "$1" | cut -d' ' -f1; }
count=0
for source in examples/*.krn tests/kernels/*.krn; do
  name=${source%.krn}
  name=${name//\//_}
  for mode in default checked ir; do
    case $mode in
      default) flags=(); file=$out/$name.kbundle ;;
      checked) flags=(--checked); file=$out/$name.checked.kbundle ;;
      ir) flags=(--emit ir); file=$out/$name.ir ;;
    esac
    # shellcheck disable=SC2086 # DIGESTS_FLAGS is a list of words.
    if "$binary" compile "$source" "${flags[@]}" ${DIGESTS_FLAGS:-} -o "$file" >"$out/$name.$mode.log" 2>&1; then
      echo "$(digest "$file")  $source $mode"
    else
      echo "$(digest "$out/$name.$mode.log")  $source $mode (failed; digest of its diagnostics)"
    fi
    count=$((count + 1))
  done
done
echo "$count outputs" >&2
