"""Builds one kdsl .krn file's SPIR-V on Intel's OpenCL CPU device through dpctl, outside
kdsl's runtime: python3 build_on_cpu.py FILE.krn (kdsl on PATH or KDSL=path/to/kdsl).
isel_crash_reduced.krn kills the process in the device compiler's x86 instruction selection
(driver 2026.22.10); isel_builds_extract_first.krn, the same kernel with the vector's
component taken before the sub-group reduction, builds."""
import os
import subprocess
import sys
import tempfile

import dpctl
import dpctl.program as dp

source = sys.argv[1]
with tempfile.TemporaryDirectory() as folder:
    spirv = os.path.join(folder, "kernel.spv")
    subprocess.run([os.environ.get("KDSL", "kdsl"), "compile", source, "--target", "spirv",
                    "--emit", "spirv", "-o", spirv], check=True)
    queue = dpctl.SyclQueue("opencl:cpu")
    print(queue.sycl_device.name, queue.sycl_device.driver_version, flush=True)
    program = dp.create_program_from_spirv(queue, open(spirv, "rb").read())
    print("built", source)
