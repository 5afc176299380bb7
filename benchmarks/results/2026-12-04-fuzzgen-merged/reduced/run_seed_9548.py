"""Runs the seed-9548 reduction on the Intel OpenCL CPU device: kdsl's SPIR-V (`kdsl compile
seed-9548-local-atomic-min.krn --target spirv --emit spirv -O0 -o k.spv`) and clang's SPIR-V of
the OpenCL C twin (`clang-22 --target=spirv64 -cl-std=CL2.0 -O0 -c seed-9548-local-atomic-min.cl
-o c.spv`). Slot 2 of each work-item must be -32768 ((0x8000 | 5) - 5 as i16).
Usage: python run_seed_9548.py k.spv c.spv"""
import ctypes
import sys

import dpctl
import dpctl.memory
import dpctl.program
import numpy as np

queue = dpctl.SyclQueue("opencl:cpu")
for path in sys.argv[1:]:
    program = dpctl.program.create_program_from_spirv(queue, open(path, "rb").read(), "")
    kernel = program.get_sycl_kernel("fuzz")
    items = 256
    memory = dpctl.memory.MemoryUSMShared(items * 3 * 2, queue=queue)
    queue.submit(kernel, [memory, ctypes.c_uint32(5)], [items], [64]).wait()
    slot2 = np.frombuffer(memory, dtype=np.int16)[2::3]
    print(path, "slot 2 values:", np.unique(slot2), "(expected [-32768])")
