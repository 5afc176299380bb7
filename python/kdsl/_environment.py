"""Prepares the process environment before the native runtime is loaded.

- ``KDSL_SYCL_SHIM``: the SYCL backend's C++ lives in ``libkdsl_sycl_shim.so``, which the runtime
  opens with ``dlopen`` at the first device discovery. The wheel ships it next to this file, and
  the package names it here unless the variable is already set. Its rpath finds ``libsycl.so``
  in the environment's ``lib`` folder (the ``intel-sycl-rt`` wheel of the ``sycl`` extra); where
  the SYCL runtime is missing, discovery reports a note instead of failing.
- ``KDSL_LIBCLC_DIR``: the compiler's math bitcode for AMDGPU (and PTX where no libdevice is
  found) is libclc's; the wheel ships the two files it needs in ``kdsl/clc``, named here
  unless the variable is already set, so compiling needs no LLVM or libclc installed.
- ``OCL_ICD_FILENAMES``: set at interpreter start by the wheel's ``.pth`` file (see
  ``_kdsl_opencl_icd``, a top-level module beside this package) so the Intel OpenCL CPU device
  is found whatever is imported first; called again here for installs whose ``.pth`` files
  Python does not read.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIRECTORY = Path(__file__).resolve().parent
PACKAGED_SYCL_SHIM = PACKAGE_DIRECTORY / "libkdsl_sycl_shim.so"
PACKAGED_LIBCLC = PACKAGE_DIRECTORY / "clc"


def prepare_environment() -> None:
    if not os.environ.get("KDSL_SYCL_SHIM") and PACKAGED_SYCL_SHIM.exists():
        os.environ["KDSL_SYCL_SHIM"] = str(PACKAGED_SYCL_SHIM)
    if not os.environ.get("KDSL_LIBCLC_DIR") and PACKAGED_LIBCLC.is_dir():
        os.environ["KDSL_LIBCLC_DIR"] = str(PACKAGED_LIBCLC)
    try:
        from _kdsl_opencl_icd import name_opencl_cpu_device
    except ImportError:  # the package used from a source folder without its top-level helper
        return
    name_opencl_cpu_device()
