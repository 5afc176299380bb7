"""Names Intel's OpenCL CPU device for the OpenCL ICD loader, at interpreter start.

The ``intel-opencl-rt`` wheel installs ``etc/OpenCL/vendors/intel-cpu.icd``, but that file names
a placeholder path (``/opt/anaconda1anaconda2anaconda3/lib/libintelocl.so``), so the ICD loader
finds no CPU device and ``import dpnp; dpnp.ones(3)`` fails with "Default device is
unavailable". ``kdsl-gpu-opencl-icd.pth`` imports this module when the interpreter starts (before
dpnp, dpctl or kdsl load the SYCL runtime, whatever the import order), and it sets
``OCL_ICD_FILENAMES`` to the environment's ``libintelocl.so``: only when the variable is unset
and only when that library is installed. ``kdsl`` calls it again at import, for installs whose
``.pth`` files are not read (``pip install --target``, ``python -S``).

Standard library only and no import of ``kdsl``: this runs in every interpreter of the
environment, so it must stay cheap and must never fail.
"""

import os
import sys

CPU_DEVICE_LIBRARY = "libintelocl.so"


def environment_library_directories() -> list:
    """The ``lib`` folders where pip puts the ``intel-opencl-rt`` wheel's libraries: the one
    beside this file's ``site-packages`` (``<base>/lib/pythonX.Y/site-packages`` -> ``<base>/lib``,
    which also covers ``pip install --user``), then ``sys.prefix/lib``."""
    site_packages = os.path.dirname(os.path.abspath(__file__))
    beside = os.path.dirname(os.path.dirname(site_packages))
    return [beside, os.path.join(sys.prefix, "lib")]


def name_opencl_cpu_device() -> None:
    if os.environ.get("OCL_ICD_FILENAMES"):
        return
    for directory in environment_library_directories():
        library = os.path.join(directory, CPU_DEVICE_LIBRARY)
        if os.path.isfile(library):
            os.environ["OCL_ICD_FILENAMES"] = library
            return


try:
    name_opencl_cpu_device()
except Exception:  # noqa: BLE001 - else every interpreter start would print a traceback
    pass
