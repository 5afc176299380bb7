#!/usr/bin/env bash
# Regenerates handmade.spv and handmade_sm_90.ptx from the hand-written LLVM IR (needs llc-22).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
llc-22 -mtriple=spirv64-unknown-unknown -filetype=obj handmade_spirv.ll -o handmade.spv
spirv-val handmade.spv
llc-22 -mtriple=nvptx64-nvidia-cuda -mcpu=sm_90 -O3 handmade_ptx.ll -o handmade_sm_90.ptx
