# Sourced on the CUDA machine by gpu-run.sh and python-gpu-run.sh, from the folder
# sycl-cuda-rig-package.sh filled (docs/sycl-cuda.md):
#   source sycl-rig/sycl-cuda-rig-env.sh LOG
# Unpacks the SYCL runtime and the unified-runtime sources into $KDSL_RIG_DIR (default
# /tmp/kdsl-sycl-rig), builds the CUDA adapter next to libsycl (output to LOG), and exports what
# makes that libsycl (and dpctl, and kdsl's SYCL shim) find a SYCL CUDA device. Returns non-zero
# if the adapter did not build.
kdsl_rig_sources=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
kdsl_rig=${KDSL_RIG_DIR:-/tmp/kdsl-sycl-rig}
mkdir -p "$kdsl_rig/prefix" "$kdsl_rig/unified-runtime"
tar -xJf "$kdsl_rig_sources/sycl-prefix.tar.xz" -C "$kdsl_rig/prefix" \
  && tar -xJf "$kdsl_rig_sources/unified-runtime.tar.xz" -C "$kdsl_rig/unified-runtime" \
  && bash "$kdsl_rig_sources/sycl-cuda-adapter.sh" "$kdsl_rig/unified-runtime" "$kdsl_rig/prefix" \
    "$kdsl_rig/build" >"$1" 2>&1 \
  && export LD_LIBRARY_PATH=$kdsl_rig/prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
  && export ONEAPI_DEVICE_SELECTOR='!opencl:*'
# ONEAPI_DEVICE_SELECTOR: that machine's PoCL OpenCL CPU device cannot build the SPIR-V LLVM's
# backend writes (UR_RESULT_ERROR_INVALID_BINARY, PoCL's limit), so SYCL leaves it out and
# dpctl's default device is the GPU.
