#!/usr/bin/env bash
# The main job on a fresh machine: installs what is missing, builds kdsl, compiles every
# example kernel to SPIR-V, PTX and AMDGPU bundles (target/kdsl-bundles), lists the devices,
# runs saxpy on the default device (a GPU before a CPU), checking the result, and runs the
# Python k-means example (examples/python/kmeans.py) on NumPy and dpnp arrays.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bash scripts/setup.sh
source scripts/env.sh
KDSL_PROFILE=release bash scripts/compile-examples.sh target/kdsl-bundles
target/release/kdsl devices
cargo run --quiet --release --example saxpy
# The default problem (100,000 x 32, 64 clusters; a few seconds): at `--quick`'s size, NumPy
# arrays copied to the device and back at each launch cost more than the kernels save.
"$(bash scripts/python-install.sh)" examples/python/kmeans.py
