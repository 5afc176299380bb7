"""Runs the seed-9454 reproducers on the OpenCL CPU device through dpctl.

    kdsl compile seed-9454-work-item-id.krn --target spirv --emit spirv -O0 -o /tmp/r.spv
    python run_on_cpu.py /tmp/r.spv seed-9454-work-item-id.cl

Prints each program's 64 results (work-groups of 32; every element must be 2), and the
OpenCL C source once more with -cl-opt-disable.
"""

import ctypes
import sys

import dpctl
import dpctl.memory
import dpctl.program
import numpy as np


def run(queue, program):
    kernel = program.get_sycl_kernel("fuzz")
    out = dpctl.memory.MemoryUSMShared(64, queue=queue)
    out.copy_from_host(np.full(64, 77, dtype=np.uint8))
    queue.submit(kernel, [ctypes.c_int32(1), out], [64], [32]).wait()
    return np.frombuffer(out.copy_to_host(), dtype=np.uint8)


def main():
    queue = dpctl.SyclQueue("opencl:cpu")
    for path in sys.argv[1:]:
        if path.endswith(".spv"):
            with open(path, "rb") as f:
                programs = [("", dpctl.program.create_program_from_spirv(queue, f.read()))]
        else:
            with open(path) as f:
                source = f.read()
            programs = [
                (options, dpctl.program.create_program_from_source(queue, source, options))
                for options in ("", "-cl-opt-disable")
            ]
        for options, program in programs:
            values = run(queue, program)
            verdict = "right" if (values == 2).all() else "WRONG"
            print(f"{path} {options}: {verdict}: {values.tolist()}")


if __name__ == "__main__":
    main()
