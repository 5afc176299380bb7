"""Prepares the process environment before the native runtime is loaded.

- ``KDSL_SYCL_SHIM``: the SYCL backend's C++ lives in ``libkdsl_sycl_shim.so``, which the runtime
  opens with ``dlopen`` at the first device discovery. The wheel ships it next to this file, and
  the package names it here unless the variable is already set. Where the SYCL runtime
  (``libsycl.so``) is missing, discovery reports a note instead of failing.
- ``OCL_ICD_FILENAMES``: the ``intel-opencl-rt`` wheel's ICD file names a placeholder path, so
  the Intel OpenCL CPU device is only found when this names ``libintelocl.so`` directly. When the
  variable is unset and that library is in this environment's ``lib`` folder, it is set to it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

PACKAGE_DIRECTORY = Path(__file__).resolve().parent
PACKAGED_SYCL_SHIM = PACKAGE_DIRECTORY / "libkdsl_sycl_shim.so"


def prepare_environment() -> None:
    if not os.environ.get("KDSL_SYCL_SHIM") and PACKAGED_SYCL_SHIM.exists():
        os.environ["KDSL_SYCL_SHIM"] = str(PACKAGED_SYCL_SHIM)
    if not os.environ.get("OCL_ICD_FILENAMES"):
        intel_cpu_device = Path(sys.prefix) / "lib" / "libintelocl.so"
        if intel_cpu_device.exists():
            os.environ["OCL_ICD_FILENAMES"] = str(intel_cpu_device)
