# fuzzgen seed 8911324 (session 30): assembles a SPIR-V file (spirv-as) and runs its kernel
# `fuzz` on the Intel OpenCL CPU device through dpctl at work-groups of 16 and 64 items,
# comparing output6[3g + 2] with NumPy. Run with the venv of scripts/env.sh.
import ctypes
import subprocess
import sys
import tempfile

import dpctl
import dpctl.memory as dm
import dpctl.program as dp
import numpy as np

with tempfile.NamedTemporaryFile(suffix=".spv") as binary:
    subprocess.run(["spirv-as", "--target-env", "spv1.2", sys.argv[1], "-o", binary.name], check=True)
    spirv = open(binary.name, "rb").read()
q = dpctl.SyclQueue("opencl:cpu")
kernel = dp.create_program_from_spirv(q, spirv).get_sycl_kernel("fuzz")
rng = np.random.default_rng(1)
for local in [16, 64]:
    for s in [125, 127]:
        n = 256
        x = rng.integers(0, 2**64 - 1, size=3 * n, dtype=np.uint64)
        init = x.copy()
        buffer = dm.MemoryUSMDevice(x.nbytes, queue=q)
        q.memcpy(buffer, x, x.nbytes)
        unused = dm.MemoryUSMDevice(4096, queue=q)
        q.submit(kernel, [buffer, unused, unused, unused, ctypes.c_uint32(s)], [n], [local]).wait()
        q.memcpy(x, buffer, x.nbytes)
        amount = (-(32768 // ((s & 126) | 1))) & 63
        expected = init[2::3] >> np.uint64(amount)
        verdict = "right" if np.array_equal(x[2::3], expected) else f"WRONG {x[2::3][:3]}, expected {expected[:3]}"
        print(f"work-groups of {local}, sc = {s}: {verdict}")
